use hookpoint::{AsyncNext, Error, extension, point};

point! {
    pub static MODEL_CALL: WrapPoint<String, String> = "model.call";
}

#[extension(point = MODEL_CALL)]
async fn wraps(req: &mut String, mut next: AsyncNext<'_, String, String>) -> Result<String, Error> {
    next.run(req).await
}

fn main() {}
