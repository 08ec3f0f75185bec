use super::*;

fn segments(lengths: &[f64]) -> Vec<Segment> {
    lengths
        .iter()
        .enumerate()
        .map(|(k, &seconds)| Segment {
            uri: format!("seg{k}.mp4"),
            seconds,
        })
        .collect()
}

#[test]
fn each_codec_is_a_set_of_its_rungs_and_every_name_is_the_ladder_s_own() {
    let rung = |codecs: &str, folder: &str, size| Rendition {
        bandwidth: 800_000,
        size: Some(size),
        codecs: codecs.into(),
        track: Track {
            folder: folder.into(),
            init: Some("init_0.mp4".into()),
            segments: segments(&[6.006, 6.006, 6.006, 1.4]),
        },
    };
    let ladder = Ladder {
        renditions: vec![
            rung("avc1.64001f,mp4a.40.2", "v0/", (1280, 720)),
            rung("avc1.64001e,mp4a.40.2", "v1/", (640, 360)),
            rung("av01.0.05M.08,mp4a.40.2", "v2/", (1280, 720)),
        ],
        subtitles: Some((
            "pt-BR".into(),
            Track {
                folder: "subs/".into(),
                init: None,
                segments: segments(&[6.0, 1.0]),
            },
        )),
    };
    let mpd = manifest(&ladder);
    assert_eq!(mpd.matches("<AdaptationSet ").count(), 3, "{mpd}");
    assert_eq!(mpd.matches("contentType=\"video\"").count(), 2, "{mpd}");
    let av1 = mpd.find("av01.0.05M.08").unwrap();
    assert!(mpd.find("avc1.64001e").unwrap() < mpd.find("id=\"1\"").unwrap());
    assert!(
        mpd.find("id=\"1\"").unwrap() < av1,
        "AV1's set second: {mpd}"
    );
    assert!(mpd.contains(
        "<Representation id=\"v1\" bandwidth=\"800000\" width=\"640\" height=\"360\" sar=\"1:1\" \
         codecs=\"avc1.64001e,mp4a.40.2\">"
    ));
    assert!(mpd.contains("<Initialization sourceURL=\"v2/init_0.mp4\"/>\n"));
    assert!(mpd.contains("<SegmentURL media=\"v0/seg3.mp4\"/>\n"));
    // 6.006 s three times sums to 18.018: no ms lost to rounding.
    assert!(mpd.contains("<SegmentTimeline><S t=\"0\" d=\"6006\" r=\"2\"/><S d=\"1400\"/>"));
    assert!(
        mpd.contains("mediaPresentationDuration=\"PT19.418S\""),
        "{mpd}"
    );
    assert!(mpd.contains("type=\"static\""));
    assert!(mpd.contains("lang=\"pt-BR\""));
    assert!(mpd.contains("<SegmentURL media=\"subs/seg1.mp4\"/>"));
    assert!(mpd.ends_with("</Period>\n</MPD>\n"));
    assert_eq!(xml("a&b\"<c>"), "a&amp;b&quot;&lt;c&gt;");
}

#[tokio::test]
async fn the_manifest_is_written_from_the_playlists_the_ladder_has() {
    let dir = tempfile::tempdir().unwrap();
    let master = dir.path().join("master.m3u8");
    std::fs::write(
        &master,
        "#EXTM3U\n#EXT-X-VERSION:7\n\
         #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"Subtitles\",LANGUAGE=\"en\",URI=\"subs/index.m3u8\"\n\
         #EXT-X-STREAM-INF:BANDWIDTH=9000,AVERAGE-BANDWIDTH=5000,RESOLUTION=320x240,CODECS=\"avc1.64000d,mp4a.40.2\",SUBTITLES=\"subs\"\n\
         v0/index.m3u8\n",
    )
    .unwrap();
    for (folder, list) in [
        (
            "v0",
            "#EXTM3U\n#EXT-X-MAP:URI=\"init_0.mp4\"\n#EXTINF:6.000000,\nseg0.mp4\n#EXTINF:2.000000,\nseg1.mp4\n#EXT-X-ENDLIST\n",
        ),
        (
            "subs",
            "#EXTM3U\n#EXTINF:6.000000,\nseg0.vtt\n#EXTINF:2.000000,\nseg1.vtt\n#EXT-X-ENDLIST\n",
        ),
    ] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
        std::fs::write(dir.path().join(folder).join("index.m3u8"), list).unwrap();
    }
    let to = dir.path().join("out.mpd");
    write_manifest(&master, &to).await.unwrap();
    let mpd = std::fs::read_to_string(&to).unwrap();
    assert!(
        mpd.contains("bandwidth=\"9000\" width=\"320\" height=\"240\""),
        "{mpd}"
    );
    assert!(
        mpd.contains("<Initialization sourceURL=\"v0/init_0.mp4\"/>"),
        "{mpd}"
    );
    assert!(
        mpd.contains("<SegmentURL media=\"subs/seg1.vtt\"/>"),
        "{mpd}"
    );
    assert!(mpd.contains("mimeType=\"text/vtt\" lang=\"en\""), "{mpd}");
    assert!(
        mpd.contains("mediaPresentationDuration=\"PT8.000S\""),
        "{mpd}"
    );
    // A master naming a playlist that was not written is ours to refuse.
    std::fs::remove_file(dir.path().join("v0/index.m3u8")).unwrap();
    assert!(write_manifest(&master, &to).await.is_err());
}
