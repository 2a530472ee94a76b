use hookpoint::{Error, Next, extension};

#[extension(point = "model.call")]
async fn wraps(req: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
    next.run(req)
}

fn main() {}
