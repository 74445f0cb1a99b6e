//! How the record prints a figure, and a target's verdict.

/// ns with one decimal; `—` if not measured or not finite.
pub fn ns(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.1}"),
        _ => "—".to_owned(),
    }
}

/// ns with two decimals; `—` if not measured.
pub fn ns2(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{v:.2}"))
}

/// KiB, whole; `—` if not measured.
pub fn kib(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{v:.0}"))
}

/// A ratio with two decimals and `×`; `—` if not measured or not finite.
pub fn ratio(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.2}×"),
        _ => "—".to_owned(),
    }
}

/// A target's verdict: met, missed (in bold), or not measured.
pub fn check(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "met",
        Some(false) => "**missed**",
        None => "not measured",
    }
}

/// `doc` with the section that starts at `heading` (up to the next `## ` heading) replaced by `section`,
/// or `section` appended if `doc` has no such heading: how `record` remakes one section of the file.
pub fn replace_section(doc: &str, heading: &str, section: &str) -> String {
    match doc.find(heading) {
        Some(start) => {
            let rest = &doc[start + heading.len()..];
            let end = rest
                .find("\n## ")
                .map_or(doc.len(), |i| start + heading.len() + i + 1);
            format!("{}{section}{}", &doc[..start], &doc[end..])
        }
        None => format!("{doc}\n{section}"),
    }
}

/// The lowest and the highest of `v`, if any.
pub fn range(v: &[f64]) -> Option<(f64, f64)> {
    let lo = v.iter().copied().min_by(f64::total_cmp)?;
    let hi = v.iter().copied().max_by(f64::total_cmp)?;
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    #[test]
    fn figures_keep_their_decimals_and_missing_ones_are_dashes() {
        assert_eq!(super::ns(Some(36.44)), "36.4");
        assert_eq!(super::ns(Some(-0.04)), "-0.0");
        assert_eq!(super::ns(Some(f64::NAN)), "—");
        assert_eq!(super::ns(None), "—");
        assert_eq!(super::ns2(Some(0.305)), "0.30");
        assert_eq!(super::kib(Some(844.5)), "844");
        assert_eq!(super::ratio(Some(0.7296)), "0.73×");
        assert_eq!(super::ratio(Some(f64::INFINITY)), "—");
        assert_eq!(super::range(&[0.3, -0.2, 0.9]), Some((-0.2, 0.9)));
        assert_eq!(super::range(&[]), None);
    }
}
