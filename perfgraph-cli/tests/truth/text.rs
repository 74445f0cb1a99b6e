//! Reading what perfgraph printed on stderr: MOOSE's tables (`PERFGRAPH_REPORT`), live lines and interval
//! lines, as the documented formats lay them out (docs/output-formats.md).

/// A table under its heading: the column names and the rows' cells (trimmed), with each row's first cell's
/// indentation (the graph tables' call depth).
#[derive(Debug)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

#[derive(Debug)]
pub struct Row {
    pub indent: usize,
    pub cells: Vec<String>,
}

impl Table {
    /// Index of the `n`th (0-based) column named `name`.
    pub fn col_nth(&self, name: &str, n: usize) -> usize {
        self.header
            .iter()
            .enumerate()
            .filter(|(_, h)| *h == name)
            .nth(n)
            .unwrap_or_else(|| panic!("no column {name} (#{n}) in {:?}", self.header))
            .0
    }

    pub fn col(&self, name: &str) -> usize {
        self.col_nth(name, 0)
    }

    /// The row whose first cell is `name`.
    pub fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.cells[0] == name)
    }
}

fn cells(line: &str) -> Vec<&str> {
    let inner = line
        .trim_end()
        .trim_start_matches('|')
        .trim_end_matches('|');
    inner.split('|').collect()
}

/// The table printed under the line `heading` (e.g. `Performance Graph:`), if any.
pub fn table(stderr: &str, heading: &str) -> Option<Table> {
    let mut lines = stderr.lines().skip_while(|l| l.trim_end() != heading);
    lines.next()?;
    let rule = |l: &str| !l.is_empty() && l.chars().all(|c| c == '-');
    assert!(lines.next().is_some_and(rule), "{heading}: no rule");
    let header = cells(lines.next()?)
        .iter()
        .map(|c| c.trim().to_owned())
        .collect();
    assert!(
        lines.next().is_some_and(rule),
        "{heading}: no rule under the header"
    );
    let mut rows = Vec::new();
    for line in lines {
        if rule(line) {
            return Some(Table { header, rows });
        }
        let cs = cells(line);
        // One space of padding, then the name (indented two spaces per level in the graph tables).
        let first = cs[0].strip_prefix(' ').unwrap_or(cs[0]);
        rows.push(Row {
            indent: first.len() - first.trim_start().len(),
            cells: cs.iter().map(|c| c.trim().to_owned()).collect(),
        });
    }
    panic!("{heading}: the table does not end");
}

/// Seconds (or any decimal) printed as `s`, in ns.
pub fn ns(s: &str, unit_ns: f64) -> u64 {
    let v: f64 = s
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s:?}"));
    (v * unit_ns).round() as u64
}

/// Half the last printed digit of `s` (in units of `unit_ns`): what rounding to that many decimals may move
/// a figure by.
pub fn resolution(s: &str, unit_ns: f64) -> u64 {
    let decimals = s.trim().split('.').nth(1).map_or(0, str::len);
    (unit_ns * 0.5 / 10f64.powi(decimals as i32)).round() as u64
}

pub const SECOND: f64 = 1e9;
pub const MILLI: f64 = 1e6;

/// A live line: its text (message and the `Finished`/`Still` word), the column of its stats' `[`
/// (0-based, by characters: 89 when the text fits, docs/live-print.md), and the seconds it prints
/// (`[%6.2f s]`), as printed (its 6 columns).
#[derive(Debug)]
pub struct LiveLine {
    pub text: String,
    pub column: usize,
    pub seconds: String,
}

/// The live lines with stats whose text contains `message`.
pub fn live_lines(stderr: &str, message: &str) -> Vec<LiveLine> {
    stderr
        .lines()
        .filter(|l| l.contains(message) && l.trim_end().ends_with("MB]"))
        .filter_map(|l| {
            let at = l.find("[ ")?;
            let close = l[at..].find(" s]")? + at;
            Some(LiveLine {
                text: l[..at].trim().to_owned(),
                column: l[..at].chars().count(),
                seconds: l[at + 1..close].to_owned(),
            })
        })
        .collect()
}

/// One interval line (`[<time> s] <thread> <indent>"<section>": <ms>/<ms> ms <share>% <calls>x`), its path
/// rebuilt from the indentation.
#[derive(Debug)]
pub struct IntervalLine {
    pub thread: String,
    pub path: Vec<String>,
    pub inside_ms: String,
    pub calls: u64,
}

pub fn interval_lines(stderr: &str) -> Vec<IntervalLine> {
    let mut out = Vec::new();
    let mut stacks = std::collections::BTreeMap::<String, Vec<String>>::new();
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((time, rest)) = rest.split_once(" s] ") else {
            continue;
        };
        if time.trim().parse::<f64>().is_err() {
            continue;
        }
        let Some(quote) = rest.find('"') else {
            continue; // a CPU line
        };
        let thread = rest[..quote].trim_end();
        let indent = quote - thread.len() - 1;
        let Some((name, figures)) = rest[quote + 1..].split_once("\": ") else {
            continue;
        };
        let stack = stacks.entry(thread.to_owned()).or_default();
        stack.truncate(indent / 2);
        stack.push(name.to_owned());
        let mut words = figures.split_whitespace();
        let inside = words.next().unwrap().split('/').next().unwrap().to_owned();
        let calls = words.last().unwrap().trim_end_matches('x').parse().unwrap();
        out.push(IntervalLine {
            thread: thread.to_owned(),
            path: stack.clone(),
            inside_ms: inside,
            calls,
        });
    }
    out
}
