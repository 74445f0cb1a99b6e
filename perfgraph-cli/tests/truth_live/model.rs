//! What every output should show, from the truth alone: the program's call tree (which section calls
//! which: the program's source, `examples/truth.rs`), each section's calls, time, self time and
//! percentiles from the calls it timed itself, each as bounds (`common::truth::Bounds`: the program's
//! inner and outer intervals).

use crate::common::truth::{Bounds, Durations, Truth};

/// Each timed section of `examples/truth.rs` and its caller (`None`: the top of its thread). `tick` is
/// called from `ticks` and from `phase`, and is not timed by the program (its calls are counted).
pub const SECTIONS: &[(&str, Option<&str>)] = &[
    ("work", None),
    ("early", Some("work")),
    ("early_sleep", Some("early")),
    ("spin_300", Some("work")),
    ("sleep_200", Some("work")),
    ("ticks", Some("work")),
    ("alloc_known", Some("work")),
    ("long_sleep", Some("work")),
    ("cpu_spin", Some("work")),
    ("with_arg", Some("work")),
    ("truth_future", Some("work")),
    ("locker", None),
    ("phase", None),
    ("phase_sleep", Some("phase")),
];

/// Ticks per phase (`examples/truth.rs`'s `phase`).
pub const PHASE_TICKS: u64 = 1_000;

/// Sections whose bodies allocate nothing (the program's own record of a call allocates nothing: its
/// vector is reserved up front), where the truth does not list them itself (`allocs.none`).
const ALLOCATE_NOTHING: &[&str] = &[
    "early",
    "early_sleep",
    "spin_300",
    "sleep_200",
    "ticks",
    "long_sleep",
    "cpu_spin",
    "with_arg",
    "truth_future",
    "locker",
    "phase",
    "phase_sleep",
];

/// The sections whose code allocates nothing, as the program says (else as its source shows).
pub fn allocate_nothing(truth: &Truth) -> Vec<String> {
    match truth.raw["allocs"]["none"].as_array() {
        Some(names) => names
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect(),
        None => ALLOCATE_NOTHING.iter().map(|n| (*n).to_owned()).collect(),
    }
}

/// The section `name`'s caller.
pub fn parent(name: &str) -> Option<&'static str> {
    SECTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no section {name}"))
        .1
}

/// The call path of `name`, outermost first, joined by `/` (`work/early/early_sleep`).
pub fn path(name: &str) -> String {
    let mut names = vec![name];
    let mut at = name;
    while let Some(p) = parent(at) {
        names.push(p);
        at = p;
    }
    names.reverse();
    names.join("/")
}

/// One section as the truth has it (its calls on every thread).
#[derive(Debug, Clone)]
pub struct Expected {
    pub name: &'static str,
    pub path: String,
    pub calls: u64,
    /// Its calls' time in the section (a future's: busy time, inside its polls).
    pub total: Bounds,
    /// Total less its children's totals; `None` where a child is `tick` (not timed by the program).
    pub self_time: Option<Bounds>,
    /// Its calls' durations (a future's: its life).
    pub durations: Durations,
}

impl Expected {
    /// The nearest-rank percentile `p` of the calls' durations (as perfgraph defines them).
    pub fn percentile(&self, p: f64) -> Bounds {
        self.durations.percentile(p)
    }

    pub fn min(&self) -> Bounds {
        self.durations.min()
    }

    pub fn max(&self) -> Bounds {
        self.durations.max()
    }

    /// Its calls' durations summed (a future's wall time).
    pub fn wall(&self) -> Bounds {
        self.durations.sum()
    }
}

/// The sections the program ran (every timed one with at least one call), as the truth has them.
pub fn expected(truth: &Truth) -> Vec<Expected> {
    SECTIONS
        .iter()
        .filter(|(name, _)| !truth.calls_of(name).is_empty())
        .map(|&(name, _)| {
            let durations = Durations::of(truth.calls_of(name).iter().map(|c| c.duration()));
            let total = truth.total(name);
            let children: Vec<&str> = SECTIONS
                .iter()
                .filter(|(_, p)| *p == Some(name))
                .map(|(n, _)| *n)
                .collect();
            let calls_tick = name == "ticks" || name == "phase";
            let self_time = (!calls_tick)
                .then(|| total - children.iter().map(|c| truth.total(c)).sum::<Bounds>());
            Expected {
                name,
                path: path(name),
                calls: durations.len() as u64,
                total,
                self_time,
                durations,
            }
        })
        .collect()
}

/// The calls of `tick` on each of its paths: (`work/ticks/tick`, `phase/tick`).
pub fn ticks(truth: &Truth) -> [(String, u64); 2] {
    let all = truth.raw["tick_calls"].as_u64().unwrap();
    let in_phases = truth.calls_of("phase").len() as u64 * PHASE_TICKS;
    [
        ("work/ticks/tick".to_owned(), all - in_phases),
        ("phase/tick".to_owned(), in_phases),
    ]
}

/// Every call the program made on `thread` (its timed calls and, on main, its ticks).
pub fn thread_calls(truth: &Truth, thread: &str) -> u64 {
    let timed = truth.calls.iter().filter(|c| c.thread == thread).count() as u64;
    let ticks = if thread == "main" {
        truth.raw["tick_calls"].as_u64().unwrap()
    } else {
        0
    };
    timed + ticks
}

/// The time `thread` spent in its top-level sections.
pub fn thread_busy(truth: &Truth, thread: &str) -> Bounds {
    truth
        .calls
        .iter()
        .filter(|c| c.thread == thread && parent(&c.name).is_none())
        .map(|c| c.busy())
        .sum()
}

/// The lock's acquisitions as the program timed them: (count, wait sum, max wait, hold sum, max hold).
/// Each wait is read around `lock()` and each hold inside the guard's life: perfgraph reads its clock
/// inside `lock()` and the guard's drop, where the program cannot, so each has one bound and is held to
/// it from both sides.
pub fn lock(truth: &Truth) -> (u64, Bounds, Bounds, Bounds, Bounds) {
    let acq = truth.raw["locks"]["acquisitions"].as_array().unwrap();
    let f = |k: &'static str| acq.iter().map(move |a| a[k].as_u64().unwrap());
    (
        acq.len() as u64,
        Bounds::single(f("wait_ns").sum()),
        Bounds::single(f("wait_ns").max().unwrap()),
        Bounds::single(f("hold_ns").sum()),
        Bounds::single(f("hold_ns").max().unwrap()),
    )
}

/// The CPU time the program measured in `cpu_spin`: inside the section and around the call.
pub fn cpu_spin_ns(truth: &Truth) -> Bounds {
    let cpu = &truth.raw["cpu"][0];
    Bounds {
        low: cpu["cpu_ns"].as_u64().unwrap(),
        high: cpu["outer_cpu_ns"].as_u64().unwrap(),
    }
}

/// Formats ns as seconds with 3 decimals (the tables' `Total(s)`).
pub fn secs3(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}

/// Seconds written as decimal text (`2.798525268`) as ns, exactly (no float in between).
pub fn decimal_ns(text: &str) -> u64 {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    assert!(frac.len() <= 9, "{text}: finer than ns");
    let frac = format!("{frac:0<9}");
    int.parse::<u64>().unwrap() * 1_000_000_000 + frac.parse::<u64>().unwrap()
}

/// A printed duration (`1.50 s`, `300.0 ms`, `12.5 µs`, `640 ns`, or seconds without a unit) in ns, and
/// the resolution it was printed with (half its last digit).
pub fn printed_ns(text: &str) -> (u64, u64) {
    let text = text.trim();
    let (number, scale) = match text.split_once(' ') {
        Some((n, "s")) => (n, 1e9),
        Some((n, "ms")) => (n, 1e6),
        Some((n, "µs")) => (n, 1e3),
        Some((n, "ns")) => (n, 1.0),
        None => (text, 1e9),
        _ => panic!("not a duration: {text:?}"),
    };
    let decimals = number.split_once('.').map_or(0, |(_, f)| f.len());
    let value: f64 = number
        .parse()
        .unwrap_or_else(|_| panic!("not a duration: {text:?}"));
    let half_digit = 0.5 * scale / 10f64.powi(decimals as i32);
    ((value * scale).round() as u64, half_digit.ceil() as u64)
}
