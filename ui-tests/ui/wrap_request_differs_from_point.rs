use hookpoint::{Error, Next, extension, point};

point! {
    pub static MODEL_CALL: WrapPoint<String, String> = "model.call";
}

#[extension(point = MODEL_CALL)]
fn wraps(req: &mut u32, mut next: Next<'_, u32, String>) -> Result<String, Error> {
    next.run(req)
}

fn main() {}
