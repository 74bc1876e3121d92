//! Text that came from a server (error bodies, `event: error` messages, `finish_reason`, model
//! names, header values) is data, never terminal control: an error message holding
//! `ESC ] 0;title BEL` or `ESC [2J` must not retitle or clear the user's terminal, colour the
//! output or hide text behind a carriage return or a bidi override. One rule: every control
//! character except newline and tab, and the Unicode bidi controls, is shown escaped
//! (`\x1b`, `\u{202e}`).

use std::borrow::Cow;

/// `s` with control characters shown as escapes; newlines and tabs kept.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn terminal_control_is_shown_not_obeyed() {
        let hostile = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{1b}[31mred\u{9b}31m\rover\u{202e}txt";
        let shown = printable(hostile);
        assert_eq!(
            shown,
            "\\x1b]0;PWNED\\x07\\x1b[2J\\x1b[31mred\\u{9b}31m\\x0dover\\u{202e}txt"
        );
        assert!(!shown.chars().any(|c| c.is_control()));
        assert_eq!(
            printable("two\nlines\tand é ünïcode"),
            "two\nlines\tand é ünïcode"
        );
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
