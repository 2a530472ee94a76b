use hookpoint::{AsyncNext, Error, extension};

#[extension(point = "model.call")]
async fn races(req: &mut String, mut next: AsyncNext<'_, String, String>) -> Result<String, Error> {
    let mut other = req.clone();
    let first = next.run(req);
    let second = next.run(&mut other);
    let (a, b) = (first.await?, second.await?);
    Ok(a + &b)
}

fn main() {}
