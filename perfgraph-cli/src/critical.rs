//! `perfgraph report --critical-path TRACE [--section NAME] [--what-if NAME=PCT]`: the `Critical Path:`
//! table of a Chrome JSON trace (`perfgraph_core::critical`).

use std::path::Path;

use perfgraph_core::critical::{self, Options, Scope};

use crate::failure::Failure;
use crate::load;

/// The `Critical Path:` table, with its heading, of the trace `path`.
pub fn table(
    path: &Path,
    section: Option<&str>,
    what_if: Option<(String, f64)>,
) -> Result<String, Failure> {
    let fail = |e: String| Failure(format!("{}: {e}", path.display()));
    let timeline = critical::read_timeline(load::chrome_trace(path, "report --critical-path")?)
        .map_err(fail)?;
    let mut options = Options::default();
    if let Some(name) = section {
        options.scope = Scope::Section(name.to_owned());
    }
    options.what_if = what_if;
    let path_of = critical::analyse(&timeline, &options).map_err(fail)?;
    Ok(format!("Critical Path:\n{}", path_of.table()))
}

/// `NAME=PCT`: a section and a speed-up from 0 to 100 percent.
pub fn what_if(s: &str) -> Result<(String, f64), String> {
    let (name, pct) = s.rsplit_once('=').ok_or("expected NAME=PCT, as solve=50")?;
    let pct: f64 = pct
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{pct:?} is not a percentage"))?;
    if !(0.0..=100.0).contains(&pct) || name.is_empty() {
        return Err("expected NAME=PCT with PCT from 0 to 100, as solve=50".into());
    }
    Ok((name.to_owned(), pct))
}
