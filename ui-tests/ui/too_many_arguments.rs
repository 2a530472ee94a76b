use hookpoint::{Cx, extension};

#[extension(point = "greeting")]
fn greet(cx: &Cx, text: &mut String, times: usize) {
    let _ = cx;
    text.push_str(&"!".repeat(times));
}

fn main() {}
