//! A face found in a picture: its box in that picture's pixels and its score.

use serde::{Deserialize, Serialize};

/// A face found in a picture, in that picture's pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Face {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    /// The network's confidence, 0–1.
    pub score: f64,
}

impl Face {
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    /// The box scaled by `(fx, fy)` (into another picture's pixels).
    pub fn scaled(self, fx: f64, fy: f64) -> Face {
        Face {
            x: self.x * fx,
            y: self.y * fy,
            width: self.width * fx,
            height: self.height * fy,
            ..self
        }
    }

    /// The box with its coordinates rounded to whole pixels and its score to 3
    /// places: what `attributes.outputs[].faces` shows.
    pub fn rounded(self) -> Face {
        Face {
            x: self.x.round(),
            y: self.y.round(),
            width: self.width.round(),
            height: self.height.round(),
            score: (self.score * 1000.0).round() / 1000.0,
        }
    }
}
