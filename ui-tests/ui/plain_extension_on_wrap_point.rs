use hookpoint::{extension, point};

point! {
    pub static MODEL_CALL: WrapPoint<String, String> = "model.call";
}

#[extension(point = MODEL_CALL)]
fn plain(req: &mut String) {
    req.push('!');
}

fn main() {}
