//! Foreign text made safe to show: host names, labels, ids and tags come
//! from imported files and other machines, and a control character in one
//! (an escape sequence, a carriage return, a bell) would reach the user's
//! terminal raw and could rewrite what it shows. Everything printed to a
//! terminal from such a field passes through [`for_terminal`]; markup
//! (SVG, HTML) escapes separately, in the report crate.

use std::borrow::Cow;

/// `s` with every control character (C0, DEL, C1) and every bidirectional
/// override written as a visible `\u{..}` escape; unchanged (borrowed)
/// when there is none, which is the common case.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` cut to its first `chars` characters, with `…` where it was cut: a
/// foreign field in a table or a message stays one readable cell.
pub fn clipped(s: &str, chars: usize) -> Cow<'_, str> {
    match s.char_indices().nth(chars) {
        None => Cow::Borrowed(s),
        Some((at, _)) => Cow::Owned(format!("{}…", &s[..at])),
    }
}

/// Control characters, and the bidi controls that reorder what follows
/// (they make a name display as something it is not).
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipped_cuts_at_a_character() {
        assert_eq!(clipped("short", 60), "short");
        assert_eq!(clipped("ééééé", 3), "ééé…");
        assert_eq!(clipped("abc", 3), "abc");
    }

    #[test]
    fn controls_become_visible_escapes() {
        assert_eq!(for_terminal("web-01"), "web-01");
        assert!(matches!(for_terminal("plain ünïcode"), Cow::Borrowed(_)));
        assert_eq!(for_terminal("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(for_terminal("x\ry\n\u{7}"), "x\\u{d}y\\u{a}\\u{7}");
        assert_eq!(for_terminal("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(for_terminal("evil\u{202e}gnp"), "evil\\u{202e}gnp");
        for s in ["\u{0}", "\u{7f}", "a\tb"] {
            assert!(!for_terminal(s).chars().any(|c| c.is_control()), "{s:?}");
        }
    }
}
