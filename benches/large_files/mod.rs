//! Very large edited files for the rule engine, shared by the scale tests
//! (tests/it/rules_scale.rs: correct findings at a size a debug build scans
//! in seconds) and `cargo bench --bench rules` (the time at two sizes).
//! Each shape is a `(base, head)` pair of Python text with `n` settings.

/// `n` retry counts, every one raised.
pub(crate) fn raised(n: usize) -> (String, String) {
    ("retries=2\n".repeat(n), "retries=3\n".repeat(n))
}

/// `n` raised retry counts, each between two unchanged lines: as many
/// separate changed ranges as settings.
pub(crate) fn raised_between_unchanged(n: usize) -> (String, String) {
    let side = |v: u32| (0..n).map(|i| format!("retries={v}\nx{i} = 1\n")).collect::<String>();
    (side(2), side(3))
}

/// `n` replaced retry decorators, each losing its jittered wait.
pub(crate) fn jitter_removed(n: usize) -> (String, String) {
    (
        "@retry(wait=wait_random_exponential(1))\ndef f(): pass\n".repeat(n),
        "@retry(wait=wait_fixed(1))\ndef f(): pass\n".repeat(n),
    )
}

/// `n` retry counts, one raised in the middle (line `n / 2 + 1`).
pub(crate) fn one_edit(n: usize) -> (String, String) {
    let head = format!("{}retries=9\n{}", "retries=2\n".repeat(n / 2), "retries=2\n".repeat(n - n / 2 - 1));
    ("retries=2\n".repeat(n), head)
}
