//! What went wrong with a request, in general words for someone outside the service:
//! no resolved address, port or host name, so a tenant cannot use the answers to map
//! which internal names resolve and which ports listen (webhook deliveries).

use super::error::RefusedName;

/// `timed out`, `address not allowed`, `connection refused`, `connection failed`
/// (no connection: a name that does not resolve, a reset, a TLS failure) or
/// `connection closed` (the receiver went away before it answered). The full error
/// belongs in the server's log.
pub fn general_words(error: &reqwest::Error) -> &'static str {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut refused = false;
    let mut timed_out = error.is_timeout();
    while let Some(e) = source {
        if e.downcast_ref::<RefusedName>().is_some() {
            return "address not allowed";
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
            timed_out |= io.kind() == std::io::ErrorKind::TimedOut;
        }
        source = e.source();
    }
    match (timed_out, refused, error.is_connect()) {
        (true, _, _) => "timed out",
        (_, true, _) => "connection refused",
        (_, _, true) => "connection failed",
        _ => "connection closed",
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn words_for(client: reqwest::Client, url: &str) -> &'static str {
        general_words(&client.get(url).send().await.unwrap_err())
    }

    #[tokio::test]
    async fn a_closed_port_is_a_refused_connection_without_its_address() {
        // Bound then dropped: nothing listens on the port.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let client = super::super::guarded_client(true).build().unwrap();
        let url = format!("http://127.0.0.1:{port}/hook");
        assert_eq!(words_for(client, &url).await, "connection refused");
    }

    #[tokio::test]
    async fn a_name_with_a_private_address_is_not_allowed() {
        let client = super::super::guarded_client(false).build().unwrap();
        let words = words_for(client, "http://localhost:9/hook").await;
        assert_eq!(words, "address not allowed");
    }

    #[tokio::test]
    async fn a_receiver_that_never_answers_timed_out() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let client = super::super::guarded_client(true)
            .timeout(Duration::from_millis(200))
            .build()
            .unwrap();
        assert_eq!(words_for(client, &url).await, "timed out");
        drop(listener);
    }

    #[tokio::test]
    async fn a_receiver_that_hangs_up_closed_the_connection() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move {
            // Reads the request, then hangs up without a word.
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut buf).await;
        });
        let client = super::super::guarded_client(true).build().unwrap();
        assert_eq!(words_for(client, &url).await, "connection closed");
    }
}
