//! The critical path as the JSON report's `critical_path` member (`docs/json-schema.md`): the figures of
//! the `Critical Path:` table, its wait chains, and how many pieces the path has (the pieces themselves
//! are on the trace's `critical path` track: they grow with the run, the member does not).

use serde_json::{Value, json};

use super::CriticalPath;

impl CriticalPath {
    /// The member, naming the thread the path ends on `end_thread`.
    pub(crate) fn json(&self, end_thread: &str) -> Value {
        let sections: Vec<Value> = self
            .sections
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "path_ns": s.path_ns,
                    "path_self_ns": s.path_self_ns,
                    "slack_ns": s.slack_ns,
                    "total_ns": s.total_ns,
                })
            })
            .collect();
        let chains: Vec<Value> = self
            .chains
            .iter()
            .map(|c| {
                let links: Vec<Value> = c
                    .links
                    .iter()
                    .map(|l| {
                        json!({"held": l.held, "holder": l.holder, "on": l.on, "waiter": l.waiter})
                    })
                    .collect();
                json!({
                    "links": links,
                    "root": c.root,
                    "text": c.text(),
                    "total_ns": c.total_ns,
                    "waits": c.waits,
                })
            })
            .collect();
        let o = &self.other;
        json!({
            "chains": chains,
            "end_ns": self.end_ns,
            "end_thread": end_thread,
            "length_ns": self.length_ns,
            "other": {
                "blocked_unknown_ns": o.blocked_unknown_ns,
                "not_recorded_ns": o.not_recorded_ns,
                "outside_ns": o.outside_ns,
                "wake_up_ns": o.wake_up_ns,
            },
            "pieces": self.pieces.len(),
            "sections": sections,
            "start_ns": self.start_ns,
            "threads_on_path": self.threads_on_path(),
        })
    }
}

/// The member of a run whose path was not worked out: why.
pub(crate) fn not_worked_out(why: &str) -> Value {
    json!({ "error": why })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_member_has_the_tables_figures() {
        let path = CriticalPath::example();
        let v = path.json("T3");
        assert_eq!(v["length_ns"], path.length_ns);
        assert_eq!(v["pieces"], path.pieces.len());
        assert_eq!(v["sections"][0]["name"], path.sections[0].name.as_str());
        let chain = v["chains"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["links"][0]["waiter"] == "T3")
            .unwrap();
        assert_eq!(
            chain["text"],
            "T3 waits for `L1` held by T1, which waits for `L2` held by T2 in `flush`"
        );
        assert_eq!(not_worked_out("why")["error"], "why");
    }
}
