use hookpoint::{Error, Next, extension, point};

point! {
    pub static MODEL_CALL: WrapPoint<String, String> = "model.call";
}

#[extension(point = MODEL_CALL)]
fn wraps(req: &mut String, mut next: Next<'_, String, usize>) -> Result<usize, Error> {
    next.run(req)
}

fn main() {}
