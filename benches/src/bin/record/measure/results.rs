//! The Criterion results of the three bench processes, read from the run's Criterion home.

use std::collections::BTreeMap;
use std::path::Path;

use perfgraph_benches::ids::{case, group, process};

/// Criterion's median ns per iteration, by (process, group, case id).
#[derive(Default)]
pub struct Results(BTreeMap<(String, String, String), f64>);

impl Results {
    /// Reads `<root>/<process>/<group>/*/new/{benchmark,estimates}.json` for every process and group in
    /// [`process::ALL`] and [`group::ALL`]; what is missing is left out.
    pub fn load(root: &Path) -> Results {
        let mut results = Results::default();
        for process in process::ALL {
            for group in group::ALL {
                let dir = root.join(process).join(group);
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let base = entry.path().join("new");
                    let (Ok(bench), Ok(est)) = (
                        std::fs::read_to_string(base.join("benchmark.json")),
                        std::fs::read_to_string(base.join("estimates.json")),
                    ) else {
                        continue;
                    };
                    let bench: serde_json::Value = serde_json::from_str(&bench).expect("json");
                    let est: serde_json::Value = serde_json::from_str(&est).expect("json");
                    let id = bench["function_id"].as_str().unwrap_or_default();
                    let median = est["median"]["point_estimate"].as_f64().unwrap_or(f64::NAN);
                    results.insert(process, group, id, median);
                }
            }
        }
        results
    }

    /// Sets the median of case `id` in `group` of `process`, in ns per iteration.
    pub fn insert(&mut self, process: &str, group: &str, id: &str, median_ns: f64) {
        self.0.insert(
            (process.to_owned(), group.to_owned(), id.to_owned()),
            median_ns,
        );
    }

    /// The median ns per iteration of case `id`, if measured.
    pub fn get(&self, process: &str, group: &str, id: &str) -> Option<f64> {
        self.0
            .get(&(process.to_owned(), group.to_owned(), id.to_owned()))
            .copied()
    }

    /// ns added per section over the empty call of the same process and group.
    pub fn added(&self, process: &str, group: &str, id: &str) -> Option<f64> {
        let per_call = self.get(process, group, id)?;
        let empty = self.get(process, group, case::EMPTY_CALL)?;
        let sections = sections_per_call(id);
        Some((per_call - sections * empty) / sections)
    }
}

/// Sections entered per call of case `id`'s leaf.
fn sections_per_call(id: &str) -> f64 {
    if id == case::PERFGRAPH_NESTED_3_DEEP {
        3.0
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::Results;
    use perfgraph_benches::ids::{case, group, process};

    #[test]
    fn added_subtracts_the_empty_call_per_section() {
        let mut r = Results::default();
        let (p, g) = (process::MAIN, group::ONE_THREAD);
        r.insert(p, g, case::EMPTY_CALL, 1.5);
        r.insert(p, g, case::PERFGRAPH_ENABLED, 31.5);
        r.insert(p, g, case::PERFGRAPH_NESTED_3_DEEP, 94.5);
        assert_eq!(r.added(p, g, case::PERFGRAPH_ENABLED), Some(30.0));
        // Three sections per call: (94.5 - 3 × 1.5) / 3.
        assert_eq!(r.added(p, g, case::PERFGRAPH_NESTED_3_DEEP), Some(30.0));
        assert_eq!(
            r.added(p, group::TWO_THREADS, case::PERFGRAPH_ENABLED),
            None
        );
        assert_eq!(r.added(process::CHROME, g, case::PERFGRAPH_ENABLED), None);
    }

    #[test]
    fn load_reads_criterion_json() {
        let root = std::env::temp_dir().join(format!("record-load-{}", std::process::id()));
        let new = root.join("main/one_thread/any_name/new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(
            new.join("benchmark.json"),
            r#"{"function_id":"perfgraph/enabled"}"#,
        )
        .unwrap();
        std::fs::write(
            new.join("estimates.json"),
            r#"{"median":{"point_estimate":37.25}}"#,
        )
        .unwrap();
        let r = Results::load(&root);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            r.get(process::MAIN, group::ONE_THREAD, case::PERFGRAPH_ENABLED),
            Some(37.25)
        );
        assert_eq!(
            r.get(process::MAIN, group::TWO_THREADS, case::PERFGRAPH_ENABLED),
            None
        );
    }
}
