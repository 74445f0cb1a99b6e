#!/usr/bin/env python3
"""The public API of perfgraph-core as text, one item per line, from rustdoc's JSON.

    RUSTC_BOOTSTRAP=1 cargo rustdoc -p perfgraph-core --all-features --lib -- -Z unstable-options \
        --output-format json
    python3 .ci/public-api.py target/doc/perfgraph_core.json > perfgraph-core/public-api.txt

`.ci/run` compares its output with the committed perfgraph-core/public-api.txt, so a change of the public
API (an item, a field, a method's signature, a `#[non_exhaustive]`, a deprecation) fails CI until the record
is updated with the command above, and shows up in the diff of the change. Lines are sorted. It is the
documented API: rustdoc leaves out what `#[doc(hidden)]` hides (`__private`, what only the macros use;
`__test_hooks`, what only perfgraph's own tests and benchmarks use).
Types are written as rustdoc resolves them, closures' and generic bounds' arguments left out.
"""
import json
import sys


def main(path):
    d = json.load(open(path))
    index = d["index"]
    item = lambda i: index.get(str(i))
    lines = set()

    def ty(t):
        if t is None:
            return "()"
        k, v = next(iter(t.items()))
        if k == "primitive":
            return v
        if k == "generic":
            return v
        if k == "resolved_path":
            args = v.get("args") or {}
            a = args.get("angle_bracketed", {}).get("args", []) if args else []
            inner = [ty(x["type"]) if "type" in x else (x.get("lifetime") or "?") for x in a]
            return v["path"] + ("<" + ", ".join(inner) + ">" if inner else "")
        if k == "borrowed_ref":
            return "&" + (v["lifetime"] + " " if v.get("lifetime") else "") + ("mut " if v["is_mutable"] else "") + ty(v["type"])
        if k == "raw_pointer":
            return "*" + ("mut " if v["is_mutable"] else "const ") + ty(v["type"])
        if k == "slice":
            return "[" + ty(v) + "]"
        if k == "array":
            return "[" + ty(v["type"]) + "; " + str(v["len"]) + "]"
        if k == "tuple":
            return "(" + ", ".join(ty(x) for x in v) + ")"
        if k in ("impl_trait", "dyn_trait"):
            bounds = v if k == "impl_trait" else v.get("traits", [])
            names = []
            for b in bounds:
                tb = b.get("trait_bound", b)
                tr = tb.get("trait") if isinstance(tb, dict) else None
                if tr:
                    maybe = "?" if isinstance(tb, dict) and tb.get("modifier") == "maybe" else ""
                    names.append(maybe + tr["path"])
            return ("impl " if k == "impl_trait" else "dyn ") + " + ".join(names)
        if k == "qualified_path":
            return ty(v["self_type"]) + "::" + v["name"]
        if k == "function_pointer":
            sig = v["sig"]
            return "fn(" + ", ".join(ty(x[1]) for x in sig["inputs"]) + ") -> " + ty(sig["output"])
        return k

    def marks(x):
        out = []
        attrs = " ".join(str(a) for a in x.get("attrs", []))
        if "non_exhaustive" in attrs:
            out.append("#[non_exhaustive]")
        if "doc(hidden)" in attrs or "hidden" in attrs and "doc" in attrs:
            out.append("#[doc(hidden)]")
        if x.get("deprecation"):
            out.append("#[deprecated]")
        return (" ".join(out) + " ") if out else ""

    def sig(f):
        s = f["sig"]
        inputs = ", ".join((n + ": " if n != "self" else "") + ty(t) if n != "self" else ty(t).replace("Self", "self") for n, t in s["inputs"])
        h = f["header"]
        pre = ("const " if h["is_const"] else "") + ("async " if h["is_async"] else "") + ("unsafe " if h["is_unsafe"] else "")
        return pre, "(" + inputs + ")" + (" -> " + ty(s["output"]) if s["output"] else "")

    seen = set()

    def walk(i, path, name=None):
        x = item(i)
        if x is None or (i, path) in seen:
            return
        seen.add((i, path))
        if x["visibility"] != "public" and "use" not in x["inner"]:
            return
        kind, v = next(iter(x["inner"].items()))
        if kind == "use":
            if v.get("is_glob"):
                return
            if v.get("id") is not None and item(v["id"]) is not None:
                walk(v["id"], path, v["name"])
            else:
                lines.add(f"{marks(x)}pub use {path}::{v['name']} = {v['source']}")
            return
        name = name or x["name"]
        full = path + "::" + name if path else name
        m = marks(x)
        if kind == "module":
            lines.add(f"{m}pub mod {full}")
            for c in v["items"]:
                walk(c, full)
        elif kind in ("struct", "enum", "union"):
            lines.add(f"{m}pub {kind} {full}")
            if kind == "struct" and "plain" in v["kind"]:
                for f in v["kind"]["plain"]["fields"]:
                    fx = item(f)
                    if fx and fx["visibility"] == "public":
                        lines.add(f"{marks(fx)}pub field {full}::{fx['name']}: {ty(fx['inner']['struct_field'])}")
            if kind == "enum":
                for c in v["variants"]:
                    cx = item(c)
                    if cx:
                        lines.add(f"{marks(cx)}pub variant {full}::{cx['name']}")
            for imp in v["impls"]:
                ix = item(imp)
                if not ix:
                    continue
                iv = ix["inner"]["impl"]
                if iv.get("is_synthetic") or iv.get("blanket_impl"):
                    continue
                if iv.get("trait"):
                    lines.add(f"impl {iv['trait']['path']} for {full}")
                    continue
                for c in iv["items"]:
                    cx = item(c)
                    if not cx or cx["visibility"] != "public":
                        continue
                    ck, cv = next(iter(cx["inner"].items()))
                    if ck == "function":
                        pre, s = sig(cv)
                        lines.add(f"{marks(cx)}pub {pre}fn {full}::{cx['name']}{s}")
                    elif ck == "assoc_const":
                        lines.add(f"{marks(cx)}pub const {full}::{cx['name']}: {ty(cv['type'])}")
        elif kind == "function":
            pre, s = sig(v)
            lines.add(f"{m}pub {pre}fn {full}{s}")
        elif kind == "constant":
            lines.add(f"{m}pub const {full}: {ty(v['type'])}")
        elif kind == "static":
            lines.add(f"{m}pub static {full}: {ty(v['type'])}")
        elif kind == "type_alias":
            lines.add(f"{m}pub type {full} = {ty(v['type'])}")
        elif kind == "trait":
            lines.add(f"{m}pub trait {full}")
        elif kind in ("macro", "proc_macro"):
            lines.add(f"{m}pub macro {full}!")
        else:
            lines.add(f"{m}pub {kind} {full}")

    walk(d["root"], "")
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
