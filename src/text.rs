//! Text that came from outside (a peer, a file, the command line) made safe to print: control
//! characters (escape sequences, newlines, carriage returns, …) are shown as `\u{1b}`-style
//! escapes, so that nothing a stranger sends can move the cursor, clear the screen or forge a
//! line of output.

/// `text` with every control character escaped.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` for HTML and SVG content and attribute values: `&`, `<`, `>`, `"` and `'` as
/// entities.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("node-1.example"), "node-1.example");
        assert_eq!(printable("évian 東京"), "évian 東京");
        let evil = "host\x1b[2J\r\nrank 0: all good\x07";
        let shown = printable(evil);
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(shown, "host\\u{1b}[2J\\u{d}\\u{a}rank 0: all good\\u{7}");
    }
}
