//! The YCbCr matrices (BT.601, BT.709) in floating and fixed point.

/// Which matrix a picture's YCbCr values were made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Matrix {
    /// BT.601 (SD, and what files that say nothing are taken to use).
    #[default]
    Bt601,
    /// BT.709 (HD).
    Bt709,
}

impl Matrix {
    /// The matrix ffprobe's `color_space` names: BT.709 for `bt709`, BT.601 for
    /// everything else (stated or not).
    pub fn from_probe(color_space: Option<&str>) -> Matrix {
        match color_space {
            Some("bt709") => Matrix::Bt709,
            _ => Matrix::Bt601,
        }
    }

    /// Kr and Kb, the luma weights of red and blue.
    pub(super) fn weights(self) -> (f32, f32) {
        match self {
            Matrix::Bt601 => (0.299, 0.114),
            Matrix::Bt709 => (0.2126, 0.0722),
        }
    }

    /// R, G, B from (Y − 16, Cb − 128, Cr − 128), limited range, as rows of factors.
    pub(super) fn ycbcr_to_rgb(self) -> [[f32; 3]; 3] {
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs) = (255.0 / 219.0, 255.0 / 224.0);
        let r_cr = 2.0 * (1.0 - kr) * cs;
        let b_cb = 2.0 * (1.0 - kb) * cs;
        let g_cb = -b_cb * kb / kg;
        let g_cr = -r_cr * kr / kg;
        [[ys, 0.0, r_cr], [ys, g_cb, g_cr], [ys, b_cb, 0.0]]
    }

    /// (Y − 16, Cb − 128, Cr − 128) from R, G, B.
    pub(super) fn rgb_to_ycbcr(self) -> [[f32; 3]; 3] {
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs) = (219.0 / 255.0, 224.0 / 255.0);
        [
            [kr * ys, kg * ys, kb * ys],
            [
                -kr / (2.0 * (1.0 - kb)) * cs,
                -kg / (2.0 * (1.0 - kb)) * cs,
                0.5 * cs,
            ],
            [
                0.5 * cs,
                -kg / (2.0 * (1.0 - kr)) * cs,
                -kb / (2.0 * (1.0 - kr)) * cs,
            ],
        ]
    }
}

pub(super) fn multiply(a: [[f32; 3]; 3], b: [[f32; 3]; 3]) -> [[f32; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// Fixed-point factors (×2¹⁴) of a 3×3 map on centred (Y, Cb, Cr) values.
pub(super) fn fixed(m: [[f32; 3]; 3]) -> [[i32; 3]; 3] {
    m.map(|row| row.map(|v| (v * 16384.0).round() as i32))
}

pub(super) fn clamp_u8(v: i32) -> u8 {
    v.clamp(0, 255) as u8
}
