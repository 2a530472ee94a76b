use hookpoint::{AsyncNext, Error, extension};

#[extension(point = "model.call")]
async fn spawns(req: &mut String, mut next: AsyncNext<'_, String, String>) -> Result<String, Error> {
    let mut req = req.clone();
    tokio::spawn(async move { next.run(&mut req).await }).await.unwrap()
}

fn main() {}
