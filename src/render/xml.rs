//! The one XML escaper, for every renderer that writes markup (JUnit XML, SVG, the HTML report):
//! the five special characters become entities and the characters XML 1.0 forbids (control
//! characters other than tab, newline and carriage return; U+FFFE, U+FFFF) become U+FFFD, so text
//! a server sent can never make a document unparsable.

/// `s` safe as XML/HTML text or as a quoted attribute value.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\t' | '\n' | '\r' => o.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn specials_become_entities_and_forbidden_characters_go() {
        assert_eq!(
            escape(r#"a<b>&"c"'d'"#),
            "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;"
        );
        assert_eq!(
            escape("x\u{1b}[31my\u{0}\u{FFFF}"),
            "x\u{FFFD}[31my\u{FFFD}\u{FFFD}"
        );
        assert_eq!(escape("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
    }
}
