use hookpoint::{Error, Next};

fn escape<'a>(next: Next<'a, String, String>) -> Next<'static, String, String> {
    next
}

fn main() {
    let _ = escape;
    let _: fn(&mut String, Next<'_, String, String>) -> Result<String, Error> = |_, _| Ok(String::new());
}
