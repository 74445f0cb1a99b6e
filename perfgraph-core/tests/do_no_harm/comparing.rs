//! Comparing a run with perfgraph to the compiled-out build's: the same bytes once perfgraph's lines are
//! removed, the same final screen, the same head of a pipe, the same exit status.

use super::*;

pub(crate) fn is_perfgraph_line(line: &str) -> bool {
    line.contains(MARK) || line.starts_with("perfgraph: ")
}

/// Whether `ours` is `expected` once perfgraph's lines are removed. A newline just before one of them may be
/// perfgraph's (it starts its line on a new line when the program left one open in a pipe or file): each
/// such newline is tried as the program's and as perfgraph's.
pub(crate) fn same_without_perfgraph(ours: &[u8], expected: &[u8]) -> Result<(), String> {
    let ours = String::from_utf8_lossy(&normalise_bytes(ours)).into_owned();
    let expected = String::from_utf8_lossy(&normalise_bytes(expected)).into_owned();
    let lines: Vec<&str> = ours.split_inclusive('\n').collect();
    // (line, position in `expected`) pairs already found not to match from there.
    let mut failed = std::collections::HashSet::new();
    let mut furthest = (0, 0);
    if matches_from(&lines, &expected, 0, 0, &mut failed, &mut furthest) {
        return Ok(());
    }
    let (i, at) = furthest;
    Err(format!(
        "program bytes differ at line {i} {:?}\n--- expected from there\n{}\n--- ours\n{ours}",
        lines.get(i).copied().unwrap_or(""),
        expected[at..].chars().take(400).collect::<String>()
    ))
}

pub(crate) fn matches_from(
    lines: &[&str],
    expected: &str,
    mut i: usize,
    mut at: usize,
    failed: &mut std::collections::HashSet<(usize, usize)>,
    furthest: &mut (usize, usize),
) -> bool {
    while i < lines.len() {
        let line = lines[i];
        if is_perfgraph_line(line) {
            i += 1;
            continue;
        }
        *furthest = (*furthest).max((i, at));
        if failed.contains(&(i, at)) {
            return false;
        }
        let rest = &expected[at..];
        let before_ours = lines.get(i + 1).is_some_and(|l| is_perfgraph_line(l));
        let open = line.strip_suffix('\n').filter(|_| before_ours);
        if let Some(open) = open
            && rest.starts_with(open)
            && matches_from(lines, expected, i + 1, at + open.len(), failed, furthest)
        {
            return true;
        }
        if !rest.starts_with(line) {
            failed.insert((i, at));
            return false;
        }
        at += line.len();
        i += 1;
    }
    at == expected.len()
}

/// Whether our final screen is the compiled-out one plus perfgraph's rows: without them, ours is the end
/// of theirs (perfgraph's rows may have scrolled the first of the program's off the screen), and nothing of
/// the program's is missing but what scrolled off.
pub(crate) fn same_screen(ours: &[String], expected: &[String]) -> Result<(), String> {
    let kept: Vec<&String> = ours.iter().filter(|r| !is_perfgraph_line(r)).collect();
    let removed = ours.len() - kept.len();
    let fits = kept.len() <= expected.len()
        && kept
            .iter()
            .zip(&expected[expected.len() - kept.len()..])
            .all(|(a, b)| *a == b);
    // The program's rows missing from ours can only have scrolled off: ours is at least as full.
    let complete = kept.len() == expected.len() || kept.len() + removed >= expected.len();
    if fits && complete {
        Ok(())
    } else {
        Err(format!(
            "screens differ\n--- compiled out\n{}\n--- with perfgraph\n{}",
            expected.join("\n"),
            ours.join("\n")
        ))
    }
}

/// `head -n 3` of the program's output: perfgraph's lines may take some of the three.
pub(crate) fn same_head(ours: &[u8], expected: &[u8]) -> Result<(), String> {
    let ours = String::from_utf8_lossy(ours);
    let expected = String::from_utf8_lossy(expected);
    let kept: Vec<&str> = ours.lines().filter(|l| !is_perfgraph_line(l)).collect();
    let want: Vec<&str> = expected.lines().collect();
    if want.starts_with(&kept) {
        Ok(())
    } else {
        Err(format!(
            "head differs\n--- compiled out\n{expected}\n--- with perfgraph\n{ours}"
        ))
    }
}

pub(crate) fn compare(setting: Setting, ours: &Outcome, theirs: &Outcome) -> Result<(), String> {
    if ours.status != theirs.status {
        return Err(format!(
            "exit status {:?} (signal {:?}), compiled out {:?} (signal {:?})",
            ours.status.code(),
            ours.status.signal(),
            theirs.status.code(),
            theirs.status.signal()
        ));
    }
    match setting {
        Setting::Terminal | Setting::Shell => {
            same_screen(&ours.screen, &theirs.screen).map_err(|e| {
                format!(
                    "{e}\n--- with perfgraph, as read\n{}",
                    ours.raw.escape_ascii()
                )
            })
        }
        Setting::Head => same_head(&ours.out, &theirs.out),
        Setting::ErrFile => {
            if normalise_bytes(&ours.out) != normalise_bytes(&theirs.out) {
                return Err(format!(
                    "stdout differs\n--- compiled out\n{}\n--- with perfgraph\n{}",
                    String::from_utf8_lossy(&theirs.out),
                    String::from_utf8_lossy(&ours.out)
                ));
            }
            same_without_perfgraph(&ours.err, &theirs.err)
        }
        Setting::Pipe | Setting::File => same_without_perfgraph(&ours.out, &theirs.out),
    }
}
