//! The OTLP export as an [`Output`]: the drained calls for the spans, the ring's losses, a look between
//! passes that makes the batches when due and moves the request on, and the exit's last batches.

use super::Exporter;
use crate::base::clock;
use crate::base::config::Config;
use crate::collector::net;
use crate::collector::output::{Every, Look, Output};
use crate::local::record::Record;
use crate::local::thread::ThreadState;

/// The output: the exporter until the exit, and the settings its metrics take a report with.
pub(crate) struct Otlp {
    exporter: Option<Exporter>,
    config: Config,
}

impl Otlp {
    /// The export `config` asks for (`PERFGRAPH_OTLP` set), or `None`.
    pub(crate) fn of(config: &Config) -> Option<Otlp> {
        Some(Otlp {
            exporter: Some(Exporter::open(config)?),
            config: config.clone(),
        })
    }
}

impl Output for Otlp {
    /// Spans are made from every record; unlike the trace, their drains slow down with the passes when
    /// the program is idle, so it is not woken every millisecond for them.
    fn every_record(&self) -> Every {
        if self.config.otlp_spans_on() {
            Every::Paced
        } else {
            Every::No
        }
    }

    fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        if let Some(exporter) = &mut self.exporter {
            exporter.on_records(thread, records);
        }
    }

    fn on_lost(&mut self, _thread: &ThreadState, records: u64) {
        if let Some(exporter) = &mut self.exporter {
            exporter.on_lost(records);
        }
    }

    fn on_retired(&mut self, index: u32) {
        if let Some(exporter) = &mut self.exporter {
            exporter.forget(index);
        }
    }

    /// Its batches when due, its request moved on.
    fn poll(&mut self, mono: u64) -> Look {
        let Some(exporter) = &mut self.exporter else {
            return Look::Never;
        };
        let config = &self.config;
        exporter.poll(mono, &mut || net::figures(config));
        Look::Within(exporter.poll_within(clock::monotonic_ns()))
    }

    /// The last batches, within the exit's time for them, and the line on what was not delivered.
    fn finish(&mut self) {
        if let Some(exporter) = self.exporter.take() {
            let config = &self.config;
            exporter.finish(&mut || net::figures(config));
        }
    }
}
