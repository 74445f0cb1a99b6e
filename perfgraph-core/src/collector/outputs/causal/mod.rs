//! Causal profiling's experiments (`PERFGRAPH_CAUSAL`): the output that runs them one after another, from
//! the background thread's passes, and writes each one's lines to the profile as it ends.
//!
//! An experiment picks a section that has ended (among `PERFGRAPH_CAUSAL_SECTIONS` if set) and a speed-up
//! at random, as coz does: any systematic order could bias what is compared. It lasts
//! `PERFGRAPH_CAUSAL_EXPERIMENT` (0.5 s) or longer: doubled, up to 16 times that, while its progress points
//! see fewer than 5 visits, halved back when they see more than 10. An experiment with fewer than 5 is
//! not reported, nor is the one the exit cuts short; the profile's last line counts them. The delays
//! themselves are the recording threads' ([`crate::local::causal`]).

mod lines;
mod pick;

use crate::base::config::{self, Config};
use crate::base::{clock, identity, registry, sys};
use crate::collector::files::Stream;
use crate::collector::output::Output;
use crate::collector::terminal::screen;
use crate::local::causal::{self, Started};
use crate::local::threads;
use lines::Experiment;
use pick::Rng;

/// Progress visits an experiment needs to be reported (coz's `ExperimentTargetDelta`).
const ENOUGH_VISITS: u64 = 5;

/// How long to wait for a section to end before there is one to pick, ns.
const NOTHING_YET_NS: u64 = 20_000_000;

/// The experiments, and the profile they go to.
pub(crate) struct Causal {
    file: Option<Stream>,
    named: bool,
    settings: config::Causal,
    /// The next experiment's length, ns.
    length: u64,
    rng: Rng,
    running: Option<Running>,
    /// The exit began: no more experiments.
    stopped: bool,
    unreported: u64,
    start_ns: u64,
}

/// An experiment under way.
struct Running {
    started: Started,
    section: u32,
    speedup: u32,
    ends_at: u64,
}

impl Causal {
    /// The experiments `config` asks for (`PERFGRAPH_CAUSAL`), their profile opened; `None` if it does not,
    /// or the profile cannot be opened (said in one line; the mode is then off).
    pub(crate) fn of(config: &Config) -> Option<Causal> {
        let path = config.causal.path.as_deref()?;
        let path = identity::expand(path, sys::process_id(), identity::rank(), identity::host());
        match Stream::open("PERFGRAPH_CAUSAL", &path) {
            Ok(file) => {
                let start_ns = clock::monotonic_ns();
                let mut c = Causal {
                    file: Some(file),
                    named: false,
                    settings: config.causal.clone(),
                    length: config.causal.experiment_ns,
                    rng: Rng::new(start_ns ^ (sys::process_id() as u64) << 32),
                    running: None,
                    stopped: false,
                    unreported: 0,
                    start_ns,
                };
                let unix = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos());
                c.write(&lines::startup(unix));
                Some(c)
            }
            Err(line) => {
                screen::warn(&line);
                causal::set_on(false);
                None
            }
        }
    }

    /// Writes `text` to the profile. A write that fails is said once, and ends the experiments.
    fn write(&mut self, text: &str) {
        let Some(file) = &mut self.file else {
            return;
        };
        let mut written = file.write_all(text.as_bytes()).map_err(|e| file.error(&e));
        if written.is_ok() && !self.named {
            self.named = true;
            written = file.take_name();
        }
        if let Err(line) = written {
            screen::warn(&line);
            self.file = None;
            self.stop();
        }
    }

    /// No more experiments: the one under way (if any) ends unreported.
    fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            causal::end(&r.started);
            self.unreported += 1;
        }
        self.stopped = true;
        causal::set_on(false);
    }

    /// Starts the next experiment; returns how long until it ends (or until there is one to start), ns.
    fn begin(&mut self) -> u64 {
        let counts = causal::counts();
        let candidates = pick::candidates(&counts, section_name, &self.settings.sections);
        if candidates.is_empty() {
            return NOTHING_YET_NS;
        }
        let section = candidates[self.rng.below(candidates.len() as u64) as usize];
        let speedup = pick::speedup(&self.settings.speedups, &mut self.rng);
        let open = open_in(section);
        let started = causal::start(section, speedup as f64 / 100.0, &open);
        self.running = Some(Running {
            started,
            section,
            speedup,
            ends_at: clock::monotonic_ns() + self.length,
        });
        self.length
    }

    /// Ends the experiment `r` (its time is up): its lines, if its progress points saw enough visits, and
    /// the next one's length.
    fn end(&mut self, r: Running) {
        let ended = causal::end(&r.started);
        let points = pick::points(&ended.counts, section_name, &self.settings.progress);
        let latencies = pick::latencies(
            &ended.counts,
            &ended.under_way,
            section_name,
            &self.settings.progress,
        );
        let visits = points.iter().map(|p| p.1);
        // Named points must all be seen enough; by default, the best seen one must.
        let visits = if self.settings.progress.is_empty() {
            visits.max()
        } else {
            visits.min()
        }
        .unwrap_or(0);
        if visits >= ENOUGH_VISITS {
            let e = Experiment {
                selected: section_name(r.section),
                speedup: r.speedup,
                duration: ended.duration(),
                selected_ends: ended.tally.selected_ends,
                elapsed: ended.elapsed,
                inserted: ended.inserted,
                paid: ended.tally.paid,
                skipped: ended.tally.skipped,
                unwoken: ended.tally.unwoken,
                ticked: ended.tally.ticked,
                overshoot: ended.tally.overshoot,
                points,
                latencies,
            };
            self.write(&lines::experiment(&e));
        } else {
            self.unreported += 1;
        }
        let shortest = self.settings.experiment_ns;
        if visits < ENOUGH_VISITS {
            self.length = (self.length * 2).min(shortest * 16);
        } else if visits > 2 * ENOUGH_VISITS && self.length >= 2 * shortest {
            self.length /= 2;
        }
    }
}

/// A section's name, as the profile writes it.
fn section_name(id: u32) -> String {
    registry::info(id).map_or_else(|| format!("(section {id})"), |i| i.name.to_owned())
}

/// The threads where `section` is open now, and how many times: they run it sped up from the start.
fn open_in(section: u32) -> Vec<(u32, u32)> {
    threads::all()
        .iter()
        .filter(|t| !t.exited())
        .filter_map(|t| {
            let n = t
                .open_frames()
                .iter()
                .filter(|f| f.section == section)
                .count();
            (n > 0).then_some((t.index, n as u32))
        })
        .collect()
}

impl Output for Causal {
    fn tick(&mut self, _now: u64) -> Option<u64> {
        if self.stopped {
            return None;
        }
        let now = clock::monotonic_ns();
        if let Some(r) = &self.running {
            if now < r.ends_at {
                return Some(r.ends_at - now);
            }
            if let Some(r) = self.running.take() {
                self.end(r);
            }
        }
        if self.stopped {
            return None;
        }
        Some(self.begin())
    }

    fn end_at(&mut self, _ticks: u64) {
        self.stop();
    }

    fn finish(&mut self) {
        self.stop();
        let runtime = clock::monotonic_ns().saturating_sub(self.start_ns);
        self.write(&lines::runtime(runtime, self.unreported));
        if let Some(file) = self.file.take()
            && let Err(line) = file.finish()
        {
            screen::warn(&line);
        }
    }
}
