use super::{parse_info, PageInfo};
use crate::media::error::MediaError;

const INFO: &str = "Producer:       hand\nTagged:         no\nEncrypted:      no\nPages:          3\nPage    2 size: 612 x 792 pts (letter)\nPage    2 rot:  90\nPDF version:    1.4\n";

#[test]
fn pdfinfo_gives_the_page_count_and_the_turned_size() {
    let info = parse_info(INFO, 2).unwrap().unwrap();
    assert_eq!(
        info,
        PageInfo {
            pages: 3,
            width: 792.0,
            height: 612.0
        }
    );
    assert_eq!(info.pixels(), (792, 612));
}

#[test]
fn a_page_past_the_last_is_invalid_parameter_and_encryption_is_refused() {
    let past = parse_info(INFO, 4).err().unwrap();
    assert!(matches!(
        past,
        MediaError::InvalidParameter { name: "page", .. }
    ));
    let locked = INFO.replace(
        "Encrypted:      no",
        "Encrypted:      yes (print:yes copy:no)",
    );
    let refused = parse_info(&locked, 1).err().unwrap();
    assert_eq!(refused.code().as_str(), "unsupported_input_format");
    assert!(refused.to_string().contains("encrypted PDF"), "{refused}");
    assert_eq!(
        parse_info("Pages: 1\n", 1).unwrap(),
        None,
        "no size: damaged"
    );
}
