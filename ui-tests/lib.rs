//! Compile-fail tests live in `ui/`; the runner is `tests/ui.rs`.
