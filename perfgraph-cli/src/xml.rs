//! Text inside XML and HTML (the SVG plots of `perfgraph history`, the page of `perfgraph causal --html`):
//! the characters that would end it or start markup, escaped.

/// `s` as XML text or attribute content.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}
