//! Fitting text into GitHub's size limits.

/// `s` unchanged when it fits in `max` bytes; otherwise cut on a character
/// boundary and ended with `pointer` (which says where the rest is), the
/// whole at most `max` bytes. Limits GitHub states in characters are met as
/// well, since a character is at least one byte.
pub(crate) fn cut(s: &str, max: usize, pointer: &str) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let room = max.saturating_sub(pointer.len());
    let mut end = room.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::with_capacity(end + pointer.len());
    out.push_str(&s[..end]);
    out.push_str(pointer);
    if out.len() > max {
        // Only when the pointer alone is longer than the limit.
        let mut end = max;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn fits_are_untouched_and_cuts_keep_the_pointer_and_the_limit() {
        assert_eq!(cut("short", 10, "…"), "short");
        let s = "ä".repeat(20); // 40 bytes
        let c = cut(&s, 11, "~");
        assert_eq!(c, format!("{}~", "ä".repeat(5)));
        assert!(c.len() <= 11);
        assert_eq!(cut("abcdef", 2, "long pointer"), "lo");
    }
}
