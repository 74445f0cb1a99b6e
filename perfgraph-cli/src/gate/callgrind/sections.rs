//! A perfgraph section's instruction count among a [`Profile`]'s functions: which functions are the
//! section (their names as plain paths), and their inclusive Ir, a recursion among them counted once.

use std::collections::HashSet;

use super::{Call, Profile, strip_hashes};

/// Nesting of `<...>` past which a name's text is compared as it is.
const MAX_DEPTH: usize = 32;

/// Inclusive Ir of a perfgraph section named `section` (a function's name, `Type::method` for a method,
/// or the name the user gave): the functions whose name, as a plain path, equals `section` or ends with
/// `::section` (so `Solver::step` matches `my_crate::solver::Solver::step`). The plain path drops the
/// hash, generic arguments (`Wrapper<T>::step`, `generic::<u8>`), v0 crate disambiguators (`[1a2b]`),
/// and callgrind's suffixes (`'2`, `'caller`); it writes `<my_crate::Solver as Trait>::step` and
/// `<my_crate::Solver>::step` as `my_crate::Solver::step` (the type's name, as `#[timed]` gives a method's
/// section). A closure inside the function (`step::{{closure}}`, `step::{closure#0}`, an async fn's
/// body) does not match. A name with no path matches too: section `main` is the program's `prog::main`
/// and the C `main` rustc writes, which calls it (so: the runtime's start and exit included). None when
/// no function matches (its calls inlined away, say).
///
/// Counted once when matching functions call one another (a recursion, or monomorphizations calling each
/// other): the sum, over the matching functions, of their inclusive Ir less what they cost when called
/// by a function that runs only under matching ones: a matching function or, transitively, a function
/// called only by such functions (as a closure of theirs is). A callgrind recursion copy (`fact'2`, only
/// ever under `fact`) adds nothing when its function matches too. A matching function called through a
/// function that is called from elsewhere too (a shared helper) may be counted twice: callgrind keeps
/// calls by caller and callee, not by call path, so what ran under which outer call is not in the file.
pub fn section(profile: &Profile, section: &str) -> Option<u64> {
    let (section, mut wanted) = (strip_hashes(section), String::new());
    if path_into(&section, &mut wanted, 0) < section.len() || wanted.is_empty() {
        return None; // a `'` outside `<>`: in no function's path (a name the user gave, say)
    }
    let suffix = format!("::{wanted}");
    let n = profile.functions.len();
    let mut matching = vec![false; n];
    let mut recursion_copies = Vec::new();
    let mut outer = HashSet::new();
    for (i, function) in profile.functions.iter().enumerate() {
        let (path, copy) = plain_path(&function.name);
        if path == wanted || path.ends_with(&suffix) {
            matching[i] = true;
            if copy {
                recursion_copies.push((i, path));
            } else {
                outer.insert(path);
            }
        }
    }
    if !matching.contains(&true) {
        return None;
    }
    let calls: Vec<&Call> = profile
        .calls
        .iter()
        .filter(|c| c.caller < n && c.callee < n && c.caller != c.callee)
        .collect();
    // Under: the matching functions, and those all of whose callers are under (a worklist, each call
    // followed once, from its caller when the caller joins).
    let mut callers = vec![0usize; n];
    let mut first = vec![0usize; n + 1];
    for call in &calls {
        callers[call.callee] += 1;
        first[call.caller + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut next = first.clone();
    let mut callees = vec![0usize; calls.len()];
    for call in &calls {
        callees[next[call.caller]] = call.callee;
        next[call.caller] += 1;
    }
    let mut under = matching.clone();
    let mut work: Vec<usize> = (0..n).filter(|&i| matching[i]).collect();
    while let Some(caller) = work.pop() {
        for &callee in &callees[first[caller]..first[caller + 1]] {
            if !under[callee] {
                callers[callee] -= 1;
                if callers[callee] == 0 {
                    under[callee] = true;
                    work.push(callee);
                }
            }
        }
    }
    let mut from_under = vec![0u64; n];
    for call in calls
        .iter()
        .filter(|c| under[c.caller] && matching[c.callee])
    {
        from_under[call.callee] = from_under[call.callee].saturating_add(call.inclusive);
    }
    for (i, path) in recursion_copies {
        if outer.contains(&path) {
            matching[i] = false;
        }
    }
    let counted = profile
        .functions
        .iter()
        .enumerate()
        .filter(|&(i, _)| matching[i]);
    Some(counted.fold(0u64, |total, (i, f)| {
        total.saturating_add(f.inclusive.saturating_sub(from_under[i]))
    }))
}

/// `name` as a plain path (see [`section`]), and whether callgrind's suffix on it is a recursion level
/// (`'2`).
fn plain_path(name: &str) -> (String, bool) {
    let name = strip_hashes(name);
    let mut out = String::with_capacity(name.len());
    let stop = path_into(&name, &mut out, 0);
    let level = name[stop..]
        .strip_prefix('\'')
        .map(|rest| rest.split('\'').next().unwrap_or(""));
    (
        out,
        level.is_some_and(|level| !level.is_empty() && level.bytes().all(|b| b.is_ascii_digit())),
    )
}

/// Appends the plain path of the path `s` starts with to `out`; returns where it stopped: at a `'`
/// outside `<>` (a callgrind suffix), or the end.
fn path_into(s: &str, out: &mut String, depth: usize) -> usize {
    let b = s.as_bytes();
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\'' => break,
            b'<' => {
                out.push_str(&s[copied..i]);
                let Some(close) = closing(b, i) else {
                    out.push_str(&s[i..]);
                    return b.len();
                };
                if i == 0 {
                    // `<Type as Trait>::` or `<Type>::`: the type's path.
                    type_into(self_type(&s[1..close]), out, depth + 1);
                } else if out.ends_with("::") {
                    out.truncate(out.len() - 2); // `generic::<u8>`
                }
                i = close + 1;
                copied = i;
            }
            b'[' if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') => {
                let len = b[i + 1..].iter().position(|&c| c == b']');
                match len {
                    Some(len)
                        if len > 0 && b[i + 1..i + 1 + len].iter().all(u8::is_ascii_hexdigit) =>
                    {
                        out.push_str(&s[copied..i]);
                        i += len + 2;
                        copied = i;
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&s[copied..i]);
    i
}

/// The plain path of a type: references, pointers and `dyn` taken off.
fn type_into(mut t: &str, out: &mut String, depth: usize) {
    loop {
        let before = t.len();
        t = t.trim_start();
        for prefix in ["&", "mut ", "*const ", "*mut ", "dyn "] {
            t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
        }
        if t.starts_with('\'') {
            t = t.find(' ').map_or("", |space| &t[space..]);
        }
        if t.len() == before {
            break;
        }
    }
    if depth > MAX_DEPTH {
        out.push_str(t.trim_end());
    } else {
        path_into(t.trim_end(), out, depth);
    }
}

/// The `>` closing the `<` at `open` (the `>` of an arrow `->` closes nothing).
fn closing(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'<' => depth += 1,
            b'>' if j > 0 && b[j - 1] == b'-' => {}
            b'>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// `Type` of `Type as Trait` (an ` as ` outside brackets), or all of `inner`.
fn self_type(inner: &str) -> &str {
    let b = inner.as_bytes();
    let mut depth = 0isize;
    for (j, &c) in b.iter().enumerate() {
        match c {
            b'<' | b'[' | b'(' => depth += 1,
            b'>' if j > 0 && b[j - 1] == b'-' => {}
            b'>' | b']' | b')' => depth -= 1,
            b' ' if depth == 0 && b[j..].starts_with(b" as ") => return &inner[..j],
            _ => {}
        }
    }
    inner
}

#[cfg(test)]
mod tests {
    use super::super::Function;
    use super::*;

    #[test]
    fn plain_paths() {
        let paths = [
            (
                "my_crate::solver::Solver::step",
                "my_crate::solver::Solver::step",
            ),
            (
                "<my_crate::Solver as my_crate::Trait>::step",
                "my_crate::Solver::step",
            ),
            ("<my_crate::Solver>::step", "my_crate::Solver::step"),
            ("<my_crate::Wrapper<u8>>::get", "my_crate::Wrapper::get"),
            ("my_crate::Wrapper<T>::get", "my_crate::Wrapper::get"),
            (
                "my_crate::generic::<u8, alloc::vec::Vec<u8>>",
                "my_crate::generic",
            ),
            (
                "<&mut alloc::vec::Vec<T> as core::ops::Drop>::drop",
                "alloc::vec::Vec::drop",
            ),
            ("<&'a str as core::fmt::Display>::fmt", "str::fmt"),
            ("<<a::B as c::D>::E as f::G>::h", "a::B::E::h"),
            ("<fn() -> u8 as a::F>::call", "fn() -> u8::call"),
            ("my_crate[1a2b3c4d]::solve", "my_crate::solve"),
            ("my_crate::solve::h0123456789abcdef", "my_crate::solve"),
            ("prog::fact'prog::main", "prog::fact"),
            (
                "prog::Solver::step::{{closure}}",
                "prog::Solver::step::{{closure}}",
            ),
            ("operator<(a, b)", "operator<(a, b)"),
            ("<<<<", "<<<<"),
            ("a<b>>c", "a>c"),
        ];
        for (name, path) in paths {
            assert_eq!(plain_path(name), (path.to_owned(), false), "{name}");
        }
        // callgrind's recursion levels.
        for name in [
            "prog::fact'2",
            "prog::fact::h0123456789abcdef'2'prog::main",
            "prog::fact::<'a'>'3",
        ] {
            assert_eq!(plain_path(name), ("prog::fact".to_owned(), true), "{name}");
        }
        let deep = format!("{}x{}", "<".repeat(5000), ">::y".repeat(5000));
        let _ = plain_path(&deep);
    }

    fn profile(functions: &[(&str, u64)], calls: &[(usize, usize, u64)]) -> Profile {
        Profile {
            total: 0,
            functions: functions
                .iter()
                .map(|&(name, inclusive)| Function {
                    name: name.into(),
                    inclusive,
                    self_cost: 0,
                })
                .collect(),
            calls: calls
                .iter()
                .map(|&(caller, callee, inclusive)| Call {
                    caller,
                    callee,
                    count: 1,
                    inclusive,
                })
                .collect(),
        }
    }

    #[test]
    fn sections_match_paths_and_methods() {
        let p = profile(
            &[
                ("my_crate::solver::Solver::step", 100),
                ("my_crate::solver::Solver::step::{{closure}}", 30),
                ("<my_crate::solver::Solver>::step::{closure#0}", 20),
                ("my_crate::stepper", 50),
                ("my_crate::Stepper::step2", 50),
                ("<my_crate::Other as my_crate::Trait>::run", 70),
                ("<my_crate::Wrapper<u8>>::get", 5),
                ("my_crate::solve", 200),
                ("other_crate::mysolve", 1000),
                ("a::it", 3),
            ],
            &[],
        );
        for (name, expected) in [
            ("Solver::step", Some(100)),
            ("step", Some(100)),
            ("solver::Solver::step", Some(100)),
            ("my_crate::solver::Solver::step", Some(100)),
            ("lver::Solver::step", None),
            ("Other::run", Some(70)),
            ("run", Some(70)),
            ("Trait::run", None),
            ("Wrapper::get", Some(5)),
            ("Wrapper<u8>::get", Some(5)),
            ("solve", Some(200)),
            ("missing", None),
            ("", None),
            ("<>", None),
            ("it's", None),
        ] {
            assert_eq!(section(&p, name), expected, "{name}");
        }
    }

    #[test]
    fn sections_count_a_recursion_once() {
        // Monomorphizations calling one another: the call from one to the other is in the caller's cost.
        let p = profile(
            &[
                ("prog::main", 200),
                ("prog::generic::<u8>", 100),
                ("prog::generic::<u32>", 60),
            ],
            &[(0, 1, 100), (1, 2, 30), (0, 2, 30)],
        );
        assert_eq!(section(&p, "generic"), Some(130));
        // Through a closure called only from matching functions; a recursion copy with no outer function is
        // counted.
        let p = profile(
            &[
                ("m", 300),
                ("a::visit", 100),
                ("a::visit::{closure#0}", 80),
                ("b::visit", 65),
                ("c::visit'2", 9),
            ],
            &[(0, 1, 100), (1, 2, 80), (2, 3, 40), (0, 3, 25), (3, 3, 999)],
        );
        assert_eq!(section(&p, "visit"), Some(134));
        // Calls that name no function are left out.
        let mut bad = p.clone();
        bad.calls.push(Call {
            caller: 7,
            callee: 1,
            count: 1,
            inclusive: 5,
        });
        assert_eq!(section(&bad, "visit"), Some(134));
    }
}
