//! The OTLP export (`PERFGRAPH_OTLP=http://host:4318`): every `PERFGRAPH_OTLP_INTERVAL` and once at exit,
//! the background thread posts the sections' metrics ([`export::otlp::metrics`]) to `/v1/metrics`, and
//! the spans `PERFGRAPH_OTLP_SPANS` chose ([`spans`]) to `/v1/traces`.
//!
//! Never a wait, as the control socket and the Prometheus endpoint: a request is begun and moved on at
//! each look ([`http::Post`]), one at a time, given [`TIMEOUT`] in all. A host name is resolved at the
//! start on a short-lived thread of its own ([`address`]), since `getaddrinfo` can block for seconds; a
//! name that does not resolve is remembered, and the exit waits for no lookup.
//!
//! A collector that is down or slow costs the program nothing: batches wait in a queue of at most
//! [`MAX_QUEUED`] bytes (past it the oldest spans are dropped, and counted), a failed request is tried
//! again after a back-off that doubles from 1 s to [`MAX_BACKOFF`] (or what `Retry-After` asked, in full), a
//! metrics batch still waiting when the next is made is replaced by it (the figures are cumulative: only
//! a point in time is lost), and a batch the collector refuses for good (a 4xx other than 429) is
//! dropped and counted. The first failure is one warning line; at exit, what was not delivered is one
//! line more. At exit the last batches get at most [`EXIT_TIME`].
//!
//! Spans are built in pieces of at most [`spans::PIECE`] bytes, each its own request, queued as soon as
//! it is full: a drain of millions of calls is many requests of a bounded size, sent one after another,
//! never one allocation that grows with it. Every body is a buffer of the output memory budget
//! ([`budget`](crate::base::budget)): a body the budget refuses is dropped, and counted.
//!
//! [`export::otlp::metrics`]: crate::export::otlp::metrics

pub(crate) mod address;
pub(crate) mod http;
mod lost;
mod output;
pub(crate) mod spans;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use crate::base::budget::OutBuf;
use crate::base::clock;
use crate::base::config::{Config, LiveMode, OtlpSpans};
use crate::base::endpoint::Endpoint;
use crate::base::{identity, process, sys};
use crate::collector::terminal::screen;
use crate::data::Report;
use crate::export::by_section::{self, Process};
use crate::export::otlp::resource::{self, Who};
use crate::export::otlp::{self as encode, Attributes};
use crate::local::record::Record;
use crate::local::thread::ThreadState;
use address::Address;
use http::{Outcome, Post};
pub(crate) use output::Otlp;
use spans::Spans;

/// Bytes of batches waiting to be sent, at most.
pub const MAX_QUEUED: usize = 32 << 20;

/// Records handed to the spans at a time: the full pieces are queued between them, so a drain of a
/// whole ring leaves at most one or two pieces waiting.
const RECORDS_AT_A_TIME: usize = 4096;

/// A request's whole time (connecting, sending, the answer's head).
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The longest back-off between tries of perfgraph's own choosing; a collector's `Retry-After` is honoured
/// in full, however long.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The time the last batches get at exit.
pub const EXIT_TIME: Duration = Duration::from_secs(1);

/// How often a request under way is looked at.
const BUSY_LOOK: Duration = Duration::from_millis(5);

/// What a batch holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Metrics,
    /// That many spans.
    Spans(u64),
}

/// A request's body, waiting or under way.
struct Batch {
    kind: Kind,
    body: OutBuf,
}

impl Batch {
    fn path(&self) -> &'static str {
        match self.kind {
            Kind::Metrics => "/v1/metrics",
            Kind::Spans(_) => "/v1/traces",
        }
    }
}

/// What was sent and what was not.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) metrics_sent: u64,
    pub(crate) spans_sent: u64,
    pub(crate) bytes_sent: u64,
    /// Metrics batches not delivered (replaced by a newer one, refused, or left at exit).
    pub(crate) metrics_dropped: u64,
    /// Spans in batches the collector did not take (refused, or left at exit).
    pub(crate) spans_dropped: u64,
    /// Spans in batches dropped, oldest first, from a queue past [`MAX_QUEUED`].
    pub(crate) spans_queue_full: u64,
    /// Spans whose request the output memory budget refused (the pieces' own refusals are
    /// [`Spans::lost`]).
    pub(crate) spans_refused: u64,
    /// Metrics batches whose request the output memory budget refused (in `metrics_dropped` too).
    pub(crate) metrics_refused: u64,
    /// Records lost to ring overflow before the export saw them (with `all`, each one a span).
    pub(crate) ring_lost: u64,
}

/// The exporter, owned by the background thread.
pub(crate) struct Exporter {
    url: String,
    endpoint: Endpoint,
    address: Address,
    resource: Attributes,
    interval_ns: u64,
    /// Monotonic ns of the next export.
    next_export: u64,
    queue: VecDeque<Batch>,
    queued_bytes: usize,
    /// The request under way, its batch, and when it began (monotonic ns).
    under_way: Option<(Post, Batch, u64)>,
    /// No request begins before this (monotonic ns), after a failure.
    retry_at: u64,
    backoff_ns: u64,
    /// Which of the collector's addresses the next request goes to (a host name may have several: an
    /// address that takes no connection passes the request on to the next at once).
    next_address: usize,
    /// The first failure, once warned about.
    warned: Option<String>,
    spans: Option<Spans>,
    all: bool,
    tally: Tally,
}

impl Exporter {
    /// The exporter `config` asks for (`PERFGRAPH_OTLP` set), or `None`.
    pub(crate) fn open(config: &Config) -> Option<Exporter> {
        let url = config.otlp.clone()?;
        let endpoint = Endpoint::parse(&url)?;
        let (resource, bad) = resource::attributes(
            &Who {
                program: process::program_name(),
                pid: sys::process_id(),
                host: identity::host(),
                rank: identity::launcher_rank(),
            },
            std::env::var("OTEL_SERVICE_NAME").ok().as_deref(),
            std::env::var("OTEL_RESOURCE_ATTRIBUTES").ok().as_deref(),
        );
        if !bad.is_empty() {
            screen::warn(&format!(
                "perfgraph: warning: OTEL_RESOURCE_ATTRIBUTES: {bad:?} not key=value (values percent-encoded); \
                 left out, the rest applies"
            ));
        }
        // Begun now, so a name's answer (or its failure) is in long before exit.
        let address = Address::of(&endpoint);
        let spans = config.otlp_spans_on().then(|| {
            Spans::new(spans::Choice {
                all: config.otlp_spans == OtlpSpans::All,
                slow_ns: config.otlp_slow_ns.unwrap_or(config.time_limit_ns),
                shown_ns: (config.live != LiveMode::Off && config.verbosity.is_some())
                    .then_some(config.time_limit_ns),
            })
        });
        Some(Exporter {
            url,
            endpoint,
            address,
            resource,
            interval_ns: config.otlp_interval_ns,
            next_export: clock::monotonic_ns() + config.otlp_interval_ns,
            queue: VecDeque::new(),
            queued_bytes: 0,
            under_way: None,
            retry_at: 0,
            backoff_ns: 0,
            next_address: 0,
            warned: None,
            spans,
            all: config.otlp_spans == OtlpSpans::All,
            tally: Tally::default(),
        })
    }

    /// The calls `thread` ended since the last drain, for the spans.
    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        if self.spans.is_none() {
            return;
        }
        let (scale, start) = (clock::scale(), identity::start_unix_ns());
        for some in records.chunks(RECORDS_AT_A_TIME) {
            if let Some(spans) = &mut self.spans {
                spans.on_records(thread, some, scale, start);
            }
            self.queue_ready();
            process::progress();
        }
    }

    /// Records lost to ring overflow in the last drain: only spans are made from records (the metrics come
    /// from the threads' call trees, exact whatever the rings lose), so without spans none is a loss of
    /// the export's.
    pub(crate) fn on_lost(&mut self, records: u64) {
        if self.spans.is_some() {
            self.tally.ring_lost += records;
        }
    }

    /// A thread folded after its last drain.
    pub(crate) fn forget(&mut self, index: u32) {
        if let Some(spans) = &mut self.spans {
            spans.forget(index);
        }
    }

    /// Spans lost so far, all causes (the `perfgraph.spans.lost` metric), when spans are on.
    fn spans_lost(&self) -> Option<u64> {
        let spans = self.spans.as_ref()?;
        let ring = if self.all { self.tally.ring_lost } else { 0 };
        let t = &self.tally;
        Some(spans.lost + t.spans_dropped + t.spans_queue_full + t.spans_refused + ring)
    }

    /// How long the background thread may sleep before it looks again.
    pub(crate) fn poll_within(&self, mono: u64) -> Duration {
        let looking = matches!(self.address, Address::Looking(_));
        if self.under_way.is_some() || (looking && !self.queue.is_empty()) {
            return BUSY_LOOK;
        }
        let mut at = self.next_export;
        if !self.queue.is_empty() {
            at = at.min(self.retry_at);
        }
        if self.spans.as_ref().is_some_and(Spans::has_ready) {
            at = mono;
        }
        Duration::from_nanos(at.saturating_sub(mono))
    }

    /// Makes the batches that are due (`figures` gives the report and the process's figures for the
    /// metrics), and moves the requests on.
    pub(crate) fn poll(&mut self, mono: u64, figures: &mut dyn FnMut() -> (Report, Process)) {
        if mono >= self.next_export {
            self.next_export = mono + self.interval_ns;
            self.make_batches(figures);
        } else {
            self.queue_ready();
        }
        self.send(mono, false);
    }

    /// The metrics batch and the spans batch, queued.
    fn make_batches(&mut self, figures: &mut dyn FnMut() -> (Report, Process)) {
        let (report, process) = figures();
        let (sections, left_out) = by_section::sections(&report);
        let body = encode::metrics::request(
            &self.resource,
            &sections,
            left_out,
            process,
            encode::metrics::Times {
                start_unix_ns: identity::start_unix_ns(),
                now_unix_ns: identity::unix_now_ns(),
            },
            self.spans_lost(),
        );
        // A metrics batch still waiting is replaced: the figures are cumulative.
        if let Some(i) = self.queue.iter().position(|b| b.kind == Kind::Metrics) {
            let old = self.queue.remove(i).map_or(0, |b| b.body.len());
            self.queued_bytes -= old;
            self.tally.metrics_dropped += 1;
        }
        let mut charged = OutBuf::new();
        match charged.extend(&body) {
            Ok(()) => self.enqueue(Batch {
                kind: Kind::Metrics,
                body: charged,
            }),
            Err(_) => {
                self.tally.metrics_dropped += 1;
                self.tally.metrics_refused += 1;
            }
        }
        drop(body);
        if let Some(spans) = &mut self.spans {
            spans.seal();
        }
        self.queue_ready();
    }

    /// The full pieces of spans, each as a batch of its own.
    fn queue_ready(&mut self) {
        let Some(spans) = &mut self.spans else {
            return;
        };
        for (piece, count) in spans.take_ready() {
            let body = encode::spans::request(&self.resource, piece.as_slice());
            // The piece's bytes go back to the budget before the next is wrapped.
            drop(piece);
            match body {
                Ok(body) => self.enqueue(Batch {
                    kind: Kind::Spans(count),
                    body,
                }),
                Err(_) => self.tally.spans_refused += count,
            }
        }
    }

    /// Queues `batch`; past [`MAX_QUEUED`], the oldest spans batches go (counted).
    fn enqueue(&mut self, batch: Batch) {
        self.queued_bytes += batch.body.len();
        self.queue.push_back(batch);
        while self.queued_bytes > MAX_QUEUED {
            let Some(i) = self
                .queue
                .iter()
                .position(|b| matches!(b.kind, Kind::Spans(_)))
            else {
                break;
            };
            if let Some(old) = self.queue.remove(i) {
                self.queued_bytes -= old.body.len();
                match old.kind {
                    Kind::Spans(n) => self.tally.spans_queue_full += n,
                    Kind::Metrics => self.drop_batch(&old),
                }
            }
        }
    }

    fn drop_batch(&mut self, batch: &Batch) {
        match batch.kind {
            Kind::Metrics => self.tally.metrics_dropped += 1,
            Kind::Spans(n) => self.tally.spans_dropped += n,
        }
    }

    /// The collector's address, once known. A lookup that failed is a failure like any other (the
    /// back-off, the first warning); once the back-off is over the name is looked up again, but never
    /// while `exiting`: the exit waits for no lookup.
    fn address(&mut self, mono: u64, exiting: bool) -> Option<SocketAddr> {
        if let Some(why) = self.address.settle(&self.endpoint.host) {
            self.failed(mono, why, None);
            return None;
        }
        match &self.address {
            Address::Known(addrs) => addrs.get(self.next_address % addrs.len().max(1)).copied(),
            Address::Looking(_) => None,
            Address::Failed(_) if exiting => None,
            Address::Failed(_) => {
                self.address = Address::of(&self.endpoint);
                None
            }
        }
    }

    /// Moves the request under way on, and begins the next when it is time (`exiting`: at once, and a
    /// failed batch is not tried again).
    fn send(&mut self, mono: u64, exiting: bool) {
        if let Some((post, batch, began)) = &mut self.under_way {
            let outcome = post.step(batch.body.as_slice()).or_else(|| {
                (mono.saturating_sub(*began) >= TIMEOUT.as_nanos() as u64).then(|| Outcome::Retry {
                    why: format!("no answer within {} s", TIMEOUT.as_secs()),
                    after_s: None,
                })
            });
            let Some(outcome) = outcome else {
                return;
            };
            let Some((_, batch, _)) = self.under_way.take() else {
                return;
            };
            self.ended(mono, batch, outcome, exiting);
        }
        if self.queue.is_empty() || (!exiting && mono < self.retry_at) {
            return;
        }
        let Some(addr) = self.address(mono, exiting) else {
            return;
        };
        let Some(batch) = self.queue.pop_front() else {
            return;
        };
        self.queued_bytes -= batch.body.len();
        let head = http::head(
            &self.endpoint.authority(),
            &format!("{}{}", self.endpoint.prefix, batch.path()),
            batch.body.len(),
        );
        match Post::begin(addr, head) {
            Ok(post) => self.under_way = Some((post, batch, mono)),
            Err(e) => self.ended(mono, batch, Outcome::Unreachable(http::short(&e)), exiting),
        }
    }

    /// A request ended with `outcome`.
    fn ended(&mut self, mono: u64, batch: Batch, outcome: Outcome, exiting: bool) {
        match outcome {
            Outcome::Taken => {
                self.backoff_ns = 0;
                self.retry_at = 0;
                self.tally.bytes_sent += batch.body.len() as u64;
                match batch.kind {
                    Kind::Metrics => self.tally.metrics_sent += 1,
                    Kind::Spans(n) => self.tally.spans_sent += n,
                }
            }
            Outcome::Retry { why, after_s } => {
                self.failed(mono, why, after_s);
                let newer_metrics = batch.kind == Kind::Metrics
                    && self.queue.iter().any(|b| b.kind == Kind::Metrics);
                if exiting || newer_metrics {
                    self.drop_batch(&batch);
                } else {
                    self.queued_bytes += batch.body.len();
                    self.queue.push_front(batch);
                }
            }
            Outcome::Unreachable(why) => {
                let addresses = self.address.count();
                self.next_address += 1;
                if !self.next_address.is_multiple_of(addresses) {
                    // The host's next address, at once.
                    self.queued_bytes += batch.body.len();
                    self.queue.push_front(batch);
                } else {
                    self.ended(mono, batch, Outcome::Retry { why, after_s: None }, exiting);
                }
            }
            Outcome::Refused(why) => {
                self.failed(mono, why, None);
                self.drop_batch(&batch);
            }
        }
    }

    /// A failure: the back-off grows, and the first one is a warning line. The collector's `Retry-After`
    /// (`after_s`), when it sent one, is the wait instead, in full: OTLP/HTTP asks a client to honour it,
    /// and [`MAX_BACKOFF`] caps only perfgraph's own back-off.
    fn failed(&mut self, mono: u64, why: String, after_s: Option<u64>) {
        self.backoff_ns = (self.backoff_ns * 2).clamp(1_000_000_000, MAX_BACKOFF.as_nanos() as u64);
        let wait = after_s.map_or(self.backoff_ns, |s| s.saturating_mul(1_000_000_000));
        self.retry_at = mono.saturating_add(wait);
        if self.warned.is_none() && !process::shutting_down() {
            screen::warn(&format!(
                "perfgraph: warning: PERFGRAPH_OTLP: {}: {why}; trying again with back-off",
                self.url
            ));
        }
        if self.warned.is_none() {
            self.warned = Some(why);
        }
    }

    /// At exit: the last batches, given at most [`EXIT_TIME`] when the collector's address is known;
    /// then one line on what was not delivered. A name that did not resolve, or whose lookup has not
    /// answered yet, costs the exit no time: its batches are dropped at once.
    pub(crate) fn finish(mut self, figures: &mut dyn FnMut() -> (Report, Process)) {
        self.make_batches(figures);
        if let Some(why) = self.address.settle(&self.endpoint.host) {
            self.warned.get_or_insert(why);
        }
        let start = clock::monotonic_ns();
        let end = match &self.address {
            Address::Known(_) => start + EXIT_TIME.as_nanos() as u64,
            Address::Looking(_) | Address::Failed(_) => start,
        };
        loop {
            let mono = clock::monotonic_ns();
            if mono >= end || (self.queue.is_empty() && self.under_way.is_none()) {
                break;
            }
            self.send(mono, true);
            if self.queue.is_empty() && self.under_way.is_none() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let left = std::mem::take(&mut self.queue);
        if let Some((_, batch, _)) = self.under_way.take() {
            self.warned.get_or_insert_with(|| {
                format!("no answer within {} ms at exit", EXIT_TIME.as_millis())
            });
            self.drop_batch(&batch);
        }
        if !left.is_empty() {
            match &self.address {
                Address::Looking(_) => {
                    let host = &self.endpoint.host;
                    self.warned
                        .get_or_insert_with(|| format!("{host} not resolved by exit"));
                }
                Address::Failed(why) => {
                    self.warned.get_or_insert_with(|| why.clone());
                }
                Address::Known(_) => {}
            }
        }
        for batch in &left {
            self.drop_batch(batch);
        }
        process::progress();
        let t = self.tally;
        let spans_lost = self.spans_lost().unwrap_or(0);
        if t.metrics_dropped == 0 && spans_lost == 0 && t.ring_lost == 0 {
            return;
        }
        let mut what = vec![];
        if t.metrics_dropped > 0 {
            what.push(format!(
                "{} of {} metrics exports",
                t.metrics_dropped,
                t.metrics_dropped + t.metrics_sent
            ));
        }
        if spans_lost > 0 {
            what.push(format!(
                "{spans_lost} of {} spans",
                spans_lost + t.spans_sent
            ));
        }
        let mut line = String::from("perfgraph: warning: PERFGRAPH_OTLP: ");
        if !what.is_empty() {
            line += &format!("{} not delivered ({})", what.join(" and "), self.causes());
        }
        if t.ring_lost > 0 && !self.all {
            line += &format!(
                "{}{} lost to ring overflow before the slow ones were picked",
                if what.is_empty() { "" } else { "; " },
                crate::base::text::count(t.ring_lost, "call")
            );
        }
        screen::warn(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_honoured_in_full_and_the_back_off_is_capped() {
        let config = Config {
            otlp: Some("http://127.0.0.1:9".into()),
            ..Config::default()
        };
        let mut e = Exporter::open(&config).unwrap();
        // The first failure's warning line is not this test's.
        e.warned = Some("quiet".into());
        e.failed(5, "503".into(), Some(3600));
        assert_eq!(
            e.retry_at,
            5 + 3600 * 1_000_000_000,
            "an hour asked, an hour waited"
        );
        e.failed(5, "no connection".into(), None);
        assert_eq!(
            e.retry_at,
            5 + 2_000_000_000,
            "the back-off doubles from 1 s"
        );
        for _ in 0..10 {
            e.failed(5, "no connection".into(), None);
        }
        assert_eq!(e.retry_at, 5 + MAX_BACKOFF.as_nanos() as u64);
        e.failed(5, "503".into(), Some(u64::MAX));
        assert_eq!(e.retry_at, u64::MAX, "no overflow");
    }
}
