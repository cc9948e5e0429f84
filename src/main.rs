//! The `retrygate` binary: parse arguments, run, map the outcome to an exit code.
//!
//! The command line lives in [`cli`], a module of this binary that the
//! library cannot see (see its docs for why it is not a separate crate).

/// syn allocates for every token; with both cores parsing, glibc's malloc
/// spent about a third of the scan's time in locks and bookkeeping
/// (measured with perf on the scan benchmark). mimalloc's per-thread heaps
/// avoid that. Cargo.toml builds it with `no_thp`: with transparent huge
/// pages the kernel zeroed a 2 MiB page at each first touch, 16% of the
/// real-corpus scan's samples (`clear_page_erms`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
