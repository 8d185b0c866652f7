//! What both export formats share: the session's head that a page shows (`Meta`, filled by the
//! `export` command), and HTML escaping (the HTML page's text, and the inline HTML of the
//! Markdown). Kept apart so that neither format depends on the other.

/// The session as the head of an exported page names it.
pub struct Meta<'a> {
    pub title: &'a str,
    pub id: &'a str,
    pub cwd: &'a str,
    pub path: &'a str,
    pub created: Option<f64>,
}

/// HTML-escape text for element content and quoted attributes.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Control characters other than tab/newline have no business in a page.
            c if c.is_control() && c != '\n' && c != '\t' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}
