//! `ladder check`: one tiny request per target/model and a diagnosis in plain words.

use crate::cli::CheckArgs;

pub async fn run(_args: &CheckArgs, _quiet: bool) -> anyhow::Result<u8> {
    anyhow::bail!("ladder check is not built yet")
}
