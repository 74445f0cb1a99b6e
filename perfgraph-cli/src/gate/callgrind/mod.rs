//! Instruction counts from callgrind. `perfgraph record --metric instructions` runs the program under
//! `valgrind --tool=callgrind`; [`read`] reads the file callgrind writes (each function's inclusive and
//! self instruction count, `Ir`: the same from run to run, on any runner), and [`section`] finds a
//! perfgraph section's count among those functions.

mod sections;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufRead, Read};

pub use sections::section;

/// The largest file [`read`] reads, in bytes; past it, an error.
pub const MAX_BYTES: u64 = 1 << 30;
/// The longest name (of a function, source file or object) [`read`] accepts, in bytes.
pub const MAX_NAME: usize = 4096;
/// The most functions a file may hold.
pub const MAX_FUNCTIONS: usize = 1_000_000;
/// The longest line, in bytes (a `cmd:` line carries the program's arguments).
const MAX_LINE: usize = 1 << 20;

/// What a callgrind output file says: the run's total Ir and each function's inclusive and self Ir.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// The run's total Ir: the file's `totals:` (or, without one, its `summary:`), else the sum of its
    /// cost lines.
    pub total: u64,
    /// One entry per function, as callgrind tells them apart (by object, source file and name; the
    /// monomorphizations of a generic function share one name, and one entry, when valgrind demangles
    /// them alike), in the order the file names them.
    pub functions: Vec<Function>,
    /// The calls between functions, one entry per caller and callee, in the order the file names them;
    /// recursive ones (`caller == callee`) included. [`section`] reads them to count a recursion once.
    pub calls: Vec<Call>,
}

/// One function of a [`Profile`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Function {
    /// The name as in the file (demangled by valgrind), its hash suffix (`::h` and 16 hex digits)
    /// removed; callgrind's own suffixes stay: `'2` for a recursion's inner calls (its
    /// `--separate-recs`), `'caller` with `--separate-callers`.
    pub name: String,
    /// Ir of the function and of everything it called: [`self_cost`](Self::self_cost) plus the cost of
    /// its calls to other functions (a call to itself is already in its self cost, so not added).
    pub inclusive: u64,
    /// Ir of the function's own instructions.
    pub self_cost: u64,
}

/// The calls from one function to another, summed over the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Call {
    /// Index of the calling function in [`Profile::functions`].
    pub caller: usize,
    /// Index of the called function in [`Profile::functions`].
    pub callee: usize,
    /// How many calls.
    pub count: u64,
    /// Their inclusive Ir: what the callee cost, everything it called included, under this caller.
    pub inclusive: u64,
}

/// Reads a callgrind output file (format: <https://valgrind.org/docs/manual/cl-format.html>): `events:`
/// (the `Ir` column, whatever its position), `positions:` (`line`, `instr line`; any of `instr`, `bb`,
/// `line`), names and their compression (`fn=(id) name`, then `fn=(id)`; one table for objects, one for
/// files, one for functions), `ob=`, `fl=`/`fi=`/`fe=`, `fn=`, `cob=`, `cfi=`/`cfl=`, `cfn=`, `calls=N
/// target` followed by the call's cost line (the inclusive cost of those calls, added to the caller's
/// inclusive cost), relative positions (`+3`, `-2`, `*`), `summary:` and `totals:`, several parts.
/// Inclusive(f) = self(f) + the cost of its calls to other functions: a call to itself (recursion) is not
/// added, its cost being in self(f) already. The function a call goes to is `cfn=` in the object `cob=`
/// (else the caller's) and the file `cfi=` (else the current one, `fi=`/`fe=` included), as callgrind
/// writes them.
///
/// Untrusted input, so bounded: an error past [`MAX_BYTES`], a line past 1 MiB, a name past
/// [`MAX_NAME`] bytes, more than [`MAX_FUNCTIONS`] functions. Sums saturate. An error is one line that
/// names the line of the file: a malformed line, a number past 64 bits, a `calls=` without its cost line,
/// a compressed name used before it is defined. A truncated file is refused where it can be told: a
/// `totals:` that is not the sum of the cost lines, or a file from callgrind (`creator: callgrind`)
/// without a `totals:` after each `summary:` (callgrind writes it last).
pub fn read(input: impl BufRead) -> Result<Profile, String> {
    read_with(input, LIMITS)
}

/// The bounds [`read`] enforces (smaller in the tests).
#[derive(Clone, Copy)]
struct Limits {
    bytes: u64,
    line: usize,
    name: usize,
    functions: usize,
}

const LIMITS: Limits = Limits {
    bytes: MAX_BYTES,
    line: MAX_LINE,
    name: MAX_NAME,
    functions: MAX_FUNCTIONS,
};

fn read_with(mut input: impl BufRead, limits: Limits) -> Result<Profile, String> {
    let mut parser = Parser::new(limits);
    let mut buf = Vec::new();
    let (mut bytes, mut line_no) = (0u64, 0u64);
    loop {
        buf.clear();
        line_no += 1;
        let n = (&mut input)
            .take(limits.line as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("line {line_no}: cannot read: {e}"))?;
        if n == 0 {
            break;
        }
        bytes = bytes.saturating_add(n as u64);
        if bytes > limits.bytes {
            return Err(format!(
                "line {line_no}: the file is larger than {} bytes",
                limits.bytes
            ));
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        } else if buf.len() > limits.line {
            return Err(format!("line {line_no}: longer than {} bytes", limits.line));
        }
        parser
            .line(&String::from_utf8_lossy(&buf))
            .map_err(|e| format!("line {line_no}: {e}"))?;
    }
    parser
        .finish()
        .map_err(|e| format!("line {line_no} (end of file): {e}"))
}

/// The compression table a name specification uses.
#[derive(Clone, Copy)]
enum Kind {
    /// `ob=`, `cob=`.
    Object = 0,
    /// `fl=`, `fi=`, `fe=`, `cfi=`, `cfl=`, `jfi=`.
    File = 1,
    /// `fn=`, `cfn=`, `jfn=`.
    Function = 2,
}

/// A function as callgrind tells them apart: object, source file (the `fl=` it is under) and name, as
/// indices of interned strings.
type Key = (u32, u32, u32);

/// A function's costs while reading.
struct Acc {
    name: u32,
    self_cost: u64,
    /// Its calls to other functions.
    calls: u64,
}

/// A value given by `summary:` or `totals:` lines, summed over the parts, and how many lines gave it.
#[derive(Default, Clone, Copy)]
struct Given {
    ir: u64,
    lines: u32,
}

struct Parser {
    limits: Limits,
    strings: Vec<String>,
    interned: HashMap<String, u32>,
    /// Compression ids to interned names, by [`Kind`].
    ids: [HashMap<u64, u32>; 3],
    object: u32,
    /// The `fl=` file: the current function's.
    file: u32,
    /// The file of the current cost lines (`fi=`/`fe=` change it within a function).
    current_file: u32,
    /// The current function (its `fn=`), and its index once it has a cost line: a `fn=` line alone only
    /// defines a compressed name.
    current: Option<Key>,
    function: Option<usize>,
    call_object: Option<u32>,
    call_file: Option<u32>,
    /// The function the next `calls=` goes to (its `cfn=`).
    target: Option<Key>,
    /// A `calls=` line waiting for its cost line: the count and the callee.
    call: Option<(u64, Key)>,
    positions: usize,
    /// The number of events and the index of `Ir` among them, once `events:` is read.
    events: Option<(usize, usize)>,
    functions: Vec<Acc>,
    index: HashMap<Key, usize>,
    calls: Vec<Call>,
    call_index: HashMap<(usize, usize), usize>,
    sum: u64,
    totals: Given,
    summary: Given,
    callgrind: bool,
}

impl Parser {
    fn new(limits: Limits) -> Parser {
        Parser {
            limits,
            strings: vec![String::new()],
            interned: HashMap::from([(String::new(), 0)]),
            ids: Default::default(),
            object: 0,
            file: 0,
            current_file: 0,
            current: None,
            function: None,
            call_object: None,
            call_file: None,
            target: None,
            call: None,
            positions: 1,
            events: None,
            functions: Vec::new(),
            index: HashMap::new(),
            calls: Vec::new(),
            call_index: HashMap::new(),
            sum: 0,
            totals: Given::default(),
            summary: Given::default(),
            callgrind: false,
        }
    }

    fn line(&mut self, line: &str) -> Result<(), String> {
        let first = line.bytes().next();
        if matches!(first, Some(b'0'..=b'9' | b'+' | b'-' | b'*')) {
            return self.cost_line(line);
        }
        if self.call.is_some() {
            return Err("a `calls=` line not followed by its cost line".into());
        }
        if line.trim().is_empty() || first == Some(b'#') {
            return Ok(());
        }
        let (key, rest) = line.split_at(line.bytes().take_while(u8::is_ascii_lowercase).count());
        if let Some(value) = rest.strip_prefix('=') {
            self.specification(key, value)
        } else if let Some(value) = rest.strip_prefix(':') {
            self.header(key, value.trim())
        } else {
            Err(format!("not a callgrind line: {}", excerpt(line)))
        }
    }

    fn header(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "events" => {
                let names: Vec<&str> = value.split_ascii_whitespace().collect();
                let ir = names.iter().position(|&n| n == "Ir");
                let ir =
                    ir.ok_or_else(|| format!("`events:` has no `Ir` column: {}", excerpt(value)))?;
                self.events = Some((names.len(), ir));
            }
            "positions" => {
                self.positions = 0;
                for name in value.split_ascii_whitespace() {
                    if !matches!(name, "instr" | "bb" | "line") {
                        return Err(format!(
                            "unknown position {} in `positions:`",
                            excerpt(name)
                        ));
                    }
                    self.positions += 1;
                }
            }
            "summary" | "totals" => {
                let (count, ir) = self
                    .events
                    .ok_or_else(|| format!("`{key}:` before `events:`"))?;
                let value = costs(value.split_ascii_whitespace(), count, ir)?;
                let given = if key == "totals" {
                    &mut self.totals
                } else {
                    &mut self.summary
                };
                given.ir = given.ir.saturating_add(value);
                given.lines = given.lines.saturating_add(1);
            }
            "version" => match value.split('.').next().and_then(number) {
                Some(0 | 1) => {}
                _ => {
                    return Err(format!(
                        "format version {} (only version 1 is read)",
                        excerpt(value)
                    ));
                }
            },
            "creator" => self.callgrind = value.starts_with("callgrind"),
            // pid, cmd, part, thread, desc, event: nothing to count; other keys: a later version's.
            _ => {}
        }
        Ok(())
    }

    fn specification(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "ob" => self.object = self.name(Kind::Object, value)?,
            "fl" => {
                self.file = self.name(Kind::File, value)?;
                self.current_file = self.file;
            }
            "fi" | "fe" => self.current_file = self.name(Kind::File, value)?,
            "fn" => {
                let name = self.name(Kind::Function, value)?;
                (self.current, self.function) = (Some((self.object, self.file, name)), None);
                self.current_file = self.file;
                (self.call_object, self.call_file, self.target) = (None, None, None);
            }
            "cob" => self.call_object = Some(self.name(Kind::Object, value)?),
            "cfi" | "cfl" => self.call_file = Some(self.name(Kind::File, value)?),
            "cfn" => {
                let name = self.name(Kind::Function, value)?;
                let object = self.call_object.take().unwrap_or(self.object);
                let file = self.call_file.take().unwrap_or(self.current_file);
                self.target = Some((object, file, name));
            }
            // Jumps (`--collect-jumps`) count nothing, but may define compressed names.
            "jfi" => _ = self.name(Kind::File, value)?,
            "jfn" => _ = self.name(Kind::Function, value)?,
            "calls" => self.calls_line(value)?,
            "jump" | "jcnd" | "ln" | "bb" => {}
            _ => return Err(format!("unknown specification `{}=`", excerpt(key))),
        }
        Ok(())
    }

    fn calls_line(&mut self, value: &str) -> Result<(), String> {
        let mut tokens = value.split_ascii_whitespace();
        let count = tokens.next().and_then(number);
        let count =
            count.ok_or_else(|| format!("`calls=` without a call count: {}", excerpt(value)))?;
        let mut positions = 0;
        for token in tokens {
            if !subposition(token) {
                return Err(format!("`calls=`: {} is not a position", excerpt(token)));
            }
            positions += 1;
        }
        if positions > self.positions || (positions == 0 && self.positions > 0) {
            return Err(format!(
                "`calls=` with {positions} target positions, `positions:` names {}",
                self.positions
            ));
        }
        if self.current.is_none() {
            return Err("`calls=` before any `fn=`".into());
        }
        let target = self.target.ok_or("`calls=` without a `cfn=` before it")?;
        self.call = Some((count, target));
        Ok(())
    }

    fn cost_line(&mut self, line: &str) -> Result<(), String> {
        let (count, ir) = self.events.ok_or("a cost line before `events:`")?;
        let mut tokens = line.split_ascii_whitespace();
        for _ in 0..self.positions {
            match tokens.next() {
                Some(token) if subposition(token) => {}
                Some(token) => return Err(format!("{} is not a position", excerpt(token))),
                None => {
                    return Err(format!(
                        "a cost line with fewer than {} positions",
                        self.positions
                    ));
                }
            }
        }
        let value = costs(tokens, count, ir)?;
        let function = match (self.function, self.current) {
            (Some(function), _) => function,
            (None, Some(key)) => {
                let function = self.function_index(key)?;
                *self.function.insert(function)
            }
            (None, None) => return Err("a cost line before any `fn=`".into()),
        };
        if let Some((count, target)) = self.call.take() {
            let callee = self.function_index(target)?;
            let next = self.calls.len();
            let i = *self.call_index.entry((function, callee)).or_insert(next);
            if i == next {
                self.calls.push(Call {
                    caller: function,
                    callee,
                    count: 0,
                    inclusive: 0,
                });
            }
            let call = &mut self.calls[i];
            call.count = call.count.saturating_add(count);
            call.inclusive = call.inclusive.saturating_add(value);
            if callee != function {
                let acc = &mut self.functions[function];
                acc.calls = acc.calls.saturating_add(value);
            }
        } else {
            let acc = &mut self.functions[function];
            acc.self_cost = acc.self_cost.saturating_add(value);
            self.sum = self.sum.saturating_add(value);
        }
        Ok(())
    }

    /// The interned name a specification's value gives: `name`, `(id) name` (which defines `id`) or
    /// `(id)`.
    fn name(&mut self, kind: Kind, value: &str) -> Result<u32, String> {
        let value = value.trim();
        let (id, name) = match value.strip_prefix('(') {
            Some(after) if after.starts_with(|c: char| c.is_ascii_digit()) => {
                let close = after
                    .find(')')
                    .ok_or_else(|| format!("no `)` in {}", excerpt(value)))?;
                let id = number(&after[..close])
                    .ok_or_else(|| format!("bad name id in {}", excerpt(value)))?;
                (Some(id), after[close + 1..].trim())
            }
            _ => (None, value),
        };
        let ids = &mut self.ids[kind as usize];
        match id {
            Some(id) if name.is_empty() => ids
                .get(&id)
                .copied()
                .ok_or_else(|| format!("name ({id}) used before it is defined")),
            _ if name.is_empty() => Err("an empty name".into()),
            _ if name.len() > self.limits.name => {
                Err(format!("a name longer than {} bytes", self.limits.name))
            }
            _ => {
                let name = match kind {
                    Kind::Function => strip_hashes(name),
                    _ => Cow::Borrowed(name),
                };
                let index = match self.interned.get(name.as_ref()) {
                    Some(&index) => index,
                    None => {
                        let index =
                            u32::try_from(self.strings.len()).map_err(|_| "too many names")?;
                        self.strings.push(name.clone().into_owned());
                        self.interned.insert(name.into_owned(), index);
                        index
                    }
                };
                if let Some(id) = id {
                    self.ids[kind as usize].insert(id, index);
                }
                Ok(index)
            }
        }
    }

    fn function_index(&mut self, key: Key) -> Result<usize, String> {
        if let Some(&index) = self.index.get(&key) {
            return Ok(index);
        }
        if self.functions.len() >= self.limits.functions {
            return Err(format!("more than {} functions", self.limits.functions));
        }
        self.functions.push(Acc {
            name: key.2,
            self_cost: 0,
            calls: 0,
        });
        self.index.insert(key, self.functions.len() - 1);
        Ok(self.functions.len() - 1)
    }

    fn finish(self) -> Result<Profile, String> {
        if self.call.is_some() {
            return Err(
                "the file ends after a `calls=` line, without its cost line (truncated?)".into(),
            );
        }
        if self.events.is_none() {
            return Err("no `events:` line: not a callgrind file".into());
        }
        if self.totals.lines > 0 && self.totals.ir != self.sum {
            return Err(format!(
                "`totals:` says {} Ir, the cost lines sum to {} (truncated or corrupt?)",
                self.totals.ir, self.sum
            ));
        }
        if self.callgrind && (self.totals.lines == 0 || self.summary.lines > self.totals.lines) {
            return Err(
                "no `totals:` line, which callgrind writes last: the file is truncated".into(),
            );
        }
        if self.totals.lines == 0 && self.summary.lines > 0 && self.sum > self.summary.ir {
            return Err(format!(
                "`summary:` says {} Ir, less than the cost lines' {}",
                self.summary.ir, self.sum
            ));
        }
        let total = match (self.totals.lines, self.summary.lines) {
            (0, 0) => self.sum,
            (0, _) => self.summary.ir,
            _ => self.totals.ir,
        };
        let functions = self.functions.iter().map(|acc| Function {
            name: self.strings[acc.name as usize].clone(),
            inclusive: acc.self_cost.saturating_add(acc.calls),
            self_cost: acc.self_cost,
        });
        Ok(Profile {
            total,
            functions: functions.collect(),
            calls: self.calls,
        })
    }
}

/// The Ir column of a cost, `summary:` or `totals:` line's costs (0 when the line stops before it).
fn costs<'a>(
    tokens: impl Iterator<Item = &'a str>,
    count: usize,
    ir: usize,
) -> Result<u64, String> {
    let mut value = 0;
    for (i, token) in tokens.enumerate() {
        if i == count {
            return Err(format!("more costs than the {count} events of `events:`"));
        }
        let cost = number(token)
            .ok_or_else(|| format!("{} is not a count (or is past 64 bits)", excerpt(token)))?;
        if i == ir {
            value = cost;
        }
    }
    Ok(value)
}

/// A decimal or `0x` hexadecimal number that fits 64 bits.
fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u64::from_str_radix(hex, 16).ok()
        }
        Some(_) => None,
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    }
}

/// A subposition: a number, `+N` or `-N` (relative to the previous line's), or `*` (the same). Only
/// checked: a function's costs do not depend on where in it they are.
fn subposition(s: &str) -> bool {
    s == "*" || number(s.strip_prefix(['+', '-']).unwrap_or(s)).is_some()
}

/// The start of `s`, quoted, for an error message (one line, short).
fn excerpt(s: &str) -> String {
    let short: String = s.chars().take(40).collect();
    if short.len() < s.len() {
        format!("{short:?}...")
    } else {
        format!("{short:?}")
    }
}

/// `name` without the hashes of legacy Rust symbols: `::h` and 16 hex digits, at the end or before a
/// callgrind suffix (`'`).
fn strip_hashes(name: &str) -> Cow<'_, str> {
    let b = name.as_bytes();
    let (mut out, mut copied, mut i) = (None::<String>, 0, 0);
    while i + 19 <= b.len() {
        if &b[i..i + 3] == b"::h"
            && b[i + 3..i + 19].iter().all(u8::is_ascii_hexdigit)
            && (i + 19 == b.len() || b[i + 19] == b'\'')
        {
            out.get_or_insert_with(String::new)
                .push_str(&name[copied..i]);
            i += 19;
            copied = i;
        } else {
            i += 1;
        }
    }
    match out {
        None => Cow::Borrowed(name),
        Some(mut out) => {
            out.push_str(&name[copied..]);
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests;
