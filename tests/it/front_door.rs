//! Shares of the front door: one organization at its cap of requests in flight gets
//! `429 too_many_requests` while another organization and `/healthz` answer at once;
//! request bodies trickled slower than the minimum rate end with `408
//! request_too_slow`, an upload keeping what arrived.

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(a_trickled_upload_patch_ends_408_and_keeps_what_arrived);

/// A raw HTTP/1.1 answer: status, headers (lower-case names) and body.
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one response from `stream` (the server closes the connection after it).
async fn read_response(stream: &mut TcpStream) -> Raw {
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut bytes)).await;
    let text = String::from_utf8_lossy(&bytes).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Raw {
        status,
        headers,
        body: serde_json::from_str(body).unwrap_or(Value::Null),
    }
}

/// Sends `head` and `first` bytes of the body at once, then one byte of `rest` every
/// 100 ms until the server answers; returns the answer and the bytes sent.
async fn trickle(base: &str, head: &str, first: &[u8], rest: &[u8]) -> (Raw, usize, Duration) {
    let mut stream = TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    let started = Instant::now();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(first).await.unwrap();
    let mut sent = first.len();
    for byte in rest {
        let mut probe = [0u8; 1];
        match tokio::time::timeout(Duration::from_millis(100), stream.peek(&mut probe)).await {
            Ok(_) => break,
            Err(_) => {
                if stream.write_all(&[*byte]).await.is_err() {
                    break;
                }
                sent += 1;
            }
        }
    }
    let answer = read_response(&mut stream).await;
    (answer, sent, started.elapsed())
}

/// A minimum rate of 1000 B/s judged over 1 s windows, so a test trickles for seconds.
fn short_window(c: &mut mediaedit::config::ServeConfig) {
    c.front_door.min_body_bytes_per_sec = 1000;
    c.front_door.min_body_speed_window_secs = 1;
}

async fn a_trickled_upload_patch_ends_408_and_keeps_what_arrived(backend: Backend) {
    let app = spawn_app_on(backend, short_window).await;
    let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let created = app
        .client
        .post(format!("{}/v1/uploads", app.base))
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", data.len().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let location = created.headers()["location"].to_str().unwrap().to_string();

    let head = format!(
        "PATCH {location} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Tus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n\
         Content-Type: application/offset+octet-stream\r\nContent-Length: {}\r\n\r\n",
        app.token,
        data.len()
    );
    let (answer, sent, took) = trickle(&app.base, &head, &data[..300], &data[300..]).await;
    assert_eq!(answer.status, 408, "{:?}", answer.body);
    assert_eq!(answer.body["errors"][0]["code"], "request_too_slow");
    assert!(took < Duration::from_secs(4), "cut after {took:?}");
    let offset: usize = answer
        .header("upload-offset")
        .expect("the 408 says where to resume")
        .parse()
        .unwrap();
    assert!(
        (300..=sent).contains(&offset),
        "offset {offset} of {sent} sent"
    );

    // HEAD agrees, and a PATCH from there completes the upload with the right bytes.
    let probed = app
        .client
        .head(format!("{}{location}", app.base))
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    assert_eq!(
        probed.headers()["upload-offset"],
        offset.to_string().as_str()
    );
    let resumed = app
        .client
        .patch(format!("{}{location}", app.base))
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(data[offset..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 204);
    let content = app
        .client
        .get(format!("{}{location}/content", app.base))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    assert_eq!(content.status(), 200);
    assert!(content.bytes().await.unwrap() == data, "the bytes differ");
}

#[tokio::test]
async fn a_trickled_json_post_ends_408() {
    let app = spawn_app_with(short_window).await;
    let body =
        serde_json::to_vec(&edit("http://127.0.0.1:1/a.png", &["resize-image"], None)).unwrap();
    let head = format!(
        "POST /v1/edits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        app.token,
        body.len()
    );
    let (answer, _, took) = trickle(&app.base, &head, &body[..1], &body[1..]).await;
    assert_eq!(answer.status, 408, "{:?}", answer.body);
    assert_eq!(answer.body["errors"][0]["code"], "request_too_slow");
    assert_eq!(answer.header("connection"), Some("close"));
    assert!(took < Duration::from_secs(4), "cut after {took:?}");

    // A body sent at once is not judged, however slow the window rule.
    let fine = app
        .post_edit(edit("http://127.0.0.1:1/a.png", &["resize-image"], None))
        .await;
    assert_eq!(fine.status(), 201);
}

/// `GET` as `token` of `path`, answered within `limit`: the status.
async fn get_within(app: &TestApp, token: Option<&str>, path: &str, limit: Duration) -> u16 {
    let mut request = app.client.get(format!("{}{path}", app.base));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let started = Instant::now();
    let response = tokio::time::timeout(limit, request.send())
        .await
        .unwrap_or_else(|_| panic!("{path} ({token:?}) took longer than {limit:?}"))
        .unwrap();
    assert!(started.elapsed() < limit);
    response.status().as_u16()
}

// Several threads: the app and the test's 200 clients share this process.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_organization_at_its_cap_gets_429_while_others_and_healthz_answer_at_once() {
    let app = spawn_app_with(|c| {
        c.workers = 0;
        c.front_door.max_requests_per_org = 4;
    })
    .await;
    let other = create_token_in(&app.database_url(), "other-org").await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app.create_edit(edit(&src, &["resize-image"], None)).await;

    // Four long polls on an edit no worker runs hold the organization's four places
    // (one refused because the probe below took its place asks again).
    let polls: Vec<_> = (0..4)
        .map(|_| {
            let url = format!("{}/v1/edits/{id}?wait=30", app.base);
            let token = app.token.clone();
            let client = app.client.clone();
            tokio::spawn(async move {
                loop {
                    let response = client.get(&url).bearer_auth(&token).send().await;
                    match response {
                        Ok(r) if r.status() == 429 => {
                            tokio::time::sleep(Duration::from_millis(10)).await
                        }
                        other => return other,
                    }
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let response = app
            .client
            .get(format!("{}/v1/edits/{id}", app.base))
            .bearer_auth(&app.token)
            .send()
            .await
            .unwrap();
        if response.status() == 429 {
            break response;
        }
        assert!(Instant::now() < deadline, "never refused");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(refused.headers()["connection"], "close");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "too_many_requests", "{body}");
    assert_eq!(body["errors"][0]["status"], "429");

    // A flood of the same organization's requests is refused at once ...
    let started = Instant::now();
    let flooder = reqwest::Client::new();
    let flood: Vec<_> = (0..200)
        .map(|_| {
            let url = format!("{}/v1/edits/{id}?wait=30", app.base);
            let request = flooder.get(url).bearer_auth(&app.token);
            tokio::spawn(async move {
                let r = request.send().await;
                r.map(|r| r.status().as_u16()).unwrap_or(0)
            })
        })
        .collect();
    // ... while another organization and `/healthz` answer within a second.
    let limit = Duration::from_secs(1);
    assert_eq!(
        get_within(&app, Some(&other), "/v1/edits", limit).await,
        200
    );
    assert_eq!(get_within(&app, None, "/healthz", limit).await, 200);
    for status in futures::future::join_all(flood).await {
        assert_eq!(status.unwrap(), 429);
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        get_within(&app, Some(&other), "/v1/edits", limit).await,
        200
    );

    // The places come back when the long polls end (their clients leave).
    for poll in &polls {
        poll.abort();
    }
    // Not a matter of speed here: a loaded machine may take more than a second.
    let deadline = Instant::now() + Duration::from_secs(10);
    let patient = Duration::from_secs(5);
    while get_within(&app, Some(&app.token), "/v1/edits", patient).await != 200 {
        assert!(Instant::now() < deadline, "the places never came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
