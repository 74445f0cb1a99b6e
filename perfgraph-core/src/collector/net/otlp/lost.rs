//! The exit line's causes: what was not delivered, each cause with its count.

use super::{Exporter, MAX_QUEUED};
use crate::base::budget;
use crate::base::text::count;

impl Exporter {
    /// Why what was not delivered was not, each cause with its count but the collector's: the first
    /// failure (what the collector did not take), then the spans lost to the rings (with `all`), to the
    /// full queue, and to memory refused (the output memory budget, or the system).
    pub(super) fn causes(&self) -> String {
        let t = &self.tally;
        let spans = |n: u64| count(n, "span");
        let mut causes = vec![];
        let by_collector = t.spans_dropped + (t.metrics_dropped - t.metrics_refused);
        if by_collector > 0 {
            causes.push(match &self.warned {
                Some(why) => why.clone(),
                None => "the collector took them slower than they came".into(),
            });
        }
        if self.all && t.ring_lost > 0 {
            causes.push(format!("{} lost to ring overflow", spans(t.ring_lost)));
        }
        if t.spans_queue_full > 0 {
            causes.push(format!(
                "{} dropped from the full queue of {} MiB",
                spans(t.spans_queue_full),
                MAX_QUEUED >> 20
            ));
        }
        let refused = t.spans_refused + self.spans.as_ref().map_or(0, |s| s.lost);
        if refused > 0 || t.metrics_refused > 0 {
            let mut what = vec![];
            if refused > 0 {
                what.push(spans(refused));
            }
            if t.metrics_refused > 0 {
                what.push(count(t.metrics_refused, "metrics export"));
            }
            causes.push(format!(
                "{} refused memory (the outputs' {} MiB budget, or the system's)",
                what.join(" and "),
                budget::LIMIT >> 20
            ));
        }
        causes.join("; ")
    }
}
