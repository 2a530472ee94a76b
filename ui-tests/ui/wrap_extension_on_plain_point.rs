use hookpoint::{Error, Next, extension, point};

point! {
    pub static PROMPT: SyncPoint<String> = "prompt";
}

#[extension(point = PROMPT)]
fn wraps(req: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
    next.run(req)
}

fn main() {}
