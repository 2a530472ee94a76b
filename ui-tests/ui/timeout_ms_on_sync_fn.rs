//! `timeout_ms` is an async extension's time budget: a sync extension cannot be interrupted.
use hookpoint::extension;

#[extension(point = "greeting", timeout_ms = 100)]
fn slow(text: &mut String) {
    text.push('!');
}

fn main() {}
