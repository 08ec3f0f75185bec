//! How faces are found in videos (`blur-faces`).

use clap::Args;

/// Settings of face detection.
#[derive(Debug, Clone, Args)]
pub struct FaceConfig {
    /// Frames a second of a video that `blur-faces` looks for faces in (0.5–30); the
    /// boxes between two samples are covered by the hull of both, so a face moving at
    /// a normal speed stays hidden. More finds faces that appear briefly; each sample
    /// costs a detection (about 10–25 ms on one core).
    #[arg(
        long,
        env = "MEDIAEDIT_FACE_SAMPLE_FPS",
        default_value_t = 5.0,
        value_parser = parse_rate
    )]
    pub face_sample_fps: f64,
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if (0.5..=30.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "`{text}` is not a rate from 0.5 to 30 frames a second"
        )),
    }
}
