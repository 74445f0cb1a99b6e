//! `PERFGRAPH_*` names in the environment that are not settings: one warning each, naming the setting it
//! is most likely a misspelling of.

use super::Config;

/// One warning line for each `PERFGRAPH_*` name among `names` that is not a setting (a misspelling would
/// otherwise be ignored in silence), naming the closest setting when one is near: `PERFGRAPH_VERBOSE` gets
/// "did you mean PERFGRAPH_VERBOSITY?".
pub fn unknown_variables(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut unknown: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with("PERFGRAPH_") && !Config::VARIABLE_NAMES.contains(&n.as_str()))
        .collect();
    unknown.sort();
    unknown
        .iter()
        .map(|name| {
            let hint = closest(name)
                .map(|known| format!(" (did you mean {known}?)"))
                .unwrap_or_default();
            format!("perfgraph: warning: {name} is not a perfgraph setting{hint}; it is ignored")
        })
        .collect()
}

/// The setting whose name is nearest to `name` (edit distance of the part after `PERFGRAPH_`), if it is
/// near enough to be a misspelling: at most a third of the longer name's letters differ.
fn closest(name: &str) -> Option<&'static str> {
    let tail = |n: &str| n.trim_start_matches("PERFGRAPH_").to_ascii_uppercase();
    let wanted = tail(name);
    Config::VARIABLE_NAMES
        .iter()
        .map(|known| {
            let k = tail(known);
            (
                edit_distance(&wanted, &k),
                k.len().max(wanted.len()),
                *known,
            )
        })
        .filter(|&(d, len, _)| d > 0 && 3 * d <= len)
        .min_by_key(|&(d, _, _)| d)
        .map(|(_, _, known)| known)
}

/// Levenshtein distance between two ASCII-ish strings (by `char`).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}
