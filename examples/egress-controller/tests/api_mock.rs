//! The API-server side, with kube's own mock-service pattern (`tower_test::mock::pair` +
//! `kube::Client::new(service, "default")`, as kube's `mock_tests.rs`): the requests one
//! reconcile sends (finalizer patch, Secret read, status patch, finalizer removal) are
//! asserted method, path and body, and answered as an API server would. No API server can
//! be installed here; the provider behind it is the in-memory reference.

use std::sync::Arc;
use std::time::Duration;

use egress_controller::build_providers;
use egress_controller::controller::{Context, reconcile};
use egress_controller::reconcile::{Policy, Reconciler};
use egress_controller::resource::{EgressProxy, EgressProxySpec, FINALIZER};
use egress_provider::{CreateSpec, Identifier, Provider, ProvidersConfig};
use http::{Method, Request, Response};
use kube::client::Body;
use kube::runtime::controller::Action;
use serde_json::{Value, json};

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

const UID: &str = "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
const PATH: &str = "/apis/egress.example.org/v1alpha1/namespaces/ops/egressproxies/egress-a";

fn setup() -> (Arc<Context>, Handle, Arc<dyn Provider>) {
    let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(service, "default");
    let config = ProvidersConfig::from_yaml_str(
        r#"
providers:
  - name: lab
    type: in-memory
    boot_observations: 0
    allow_unverified_images: true
    images:
      debian-13: { url: "https://images.example/d13.raw", format: raw }
  - name: down
    type: in-memory
    unreachable: true
    allow_unverified_images: true
    images:
      debian-13: { url: "https://images.example/d13.raw", format: raw }
"#,
    )
    .unwrap();
    let set = build_providers(&config).unwrap();
    let lab = set.get("lab").unwrap().clone();
    let reconciler = Reconciler::new(set, &config, Policy::default());
    (Arc::new(Context { client, reconciler }), handle, lab)
}

fn object(finalizers: &[&str], deleting: bool) -> EgressProxy {
    let mut p = EgressProxy::new(
        "egress-a",
        EgressProxySpec::new("lab", "debian-13")
            .with_size_and_tags(256, &["egress"])
            .with_user_data("ud", "user-data"),
    );
    p.metadata.namespace = Some("ops".into());
    p.metadata.uid = Some(UID.into());
    p.metadata.generation = Some(3);
    p.metadata.resource_version = Some("7".into());
    if !finalizers.is_empty() {
        p.metadata.finalizers = Some(finalizers.iter().map(|s| (*s).to_owned()).collect());
    }
    if deleting {
        p.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-12-01T00:00:00Z".parse().unwrap(),
        ));
    }
    p
}

async fn body_json(req: Request<Body>) -> Value {
    let bytes = req.into_body().collect_bytes().await.unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn respond(send: tower_test::mock::SendResponse<Response<Body>>, v: &Value) {
    send.send_response(Response::new(Body::from(serde_json::to_vec(v).unwrap())));
}

/// The next request, which must be a JSON patch of the object: its body and the responder.
async fn json_patch(
    h: &mut Handle,
    what: &str,
) -> (Value, tower_test::mock::SendResponse<Response<Body>>) {
    let (req, send) = h
        .next_request()
        .await
        .unwrap_or_else(|| panic!("no request: {what}"));
    assert_eq!(req.method(), Method::PATCH, "{what}");
    assert_eq!(req.uri().path(), PATH, "{what}");
    assert_eq!(
        req.headers()["content-type"],
        "application/json-patch+json",
        "{what}"
    );
    (body_json(req).await, send)
}

/// Runs `reconcile` on `obj` while `server` answers its requests; both must finish.
async fn run<F>(ctx: Arc<Context>, obj: EgressProxy, server: F) -> Action
where
    F: Future<Output = ()> + Send + 'static,
{
    let server = tokio::spawn(server);
    let action = tokio::time::timeout(Duration::from_secs(10), reconcile(Arc::new(obj), ctx))
        .await
        .expect("reconcile finishes")
        .unwrap_or_else(|e| panic!("reconcile: {e}"));
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("every expected request was sent")
        .expect("the scenario's assertions hold");
    action
}

#[tokio::test]
async fn first_reconcile_adds_the_finalizer_and_creates_nothing() {
    let (ctx, mut h, _) = setup();
    let action = run(ctx, object(&[], false), async move {
        let (patch, send) = json_patch(&mut h, "a finalizer patch").await;
        assert_eq!(
            patch,
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]},
            ])
        );
        let mut o = serde_json::to_value(object(&[FINALIZER], false)).unwrap();
        o["metadata"]["resourceVersion"] = "8".into();
        respond(send, &o);
        assert!(
            h.next_request().await.is_none(),
            "nothing after the finalizer patch"
        );
    })
    .await;
    assert_eq!(action, Action::await_change());
}

#[tokio::test]
async fn apply_reads_the_secret_and_patches_the_status() {
    let (ctx, mut h, _) = setup();
    let action = run(ctx, object(&[FINALIZER], false), async move {
        let (req, send) = h.next_request().await.expect("the Secret read");
        assert_eq!(req.method(), Method::GET);
        assert_eq!(req.uri().path(), "/api/v1/namespaces/ops/secrets/ud");
        // base64 of "#cloud-config\n"
        respond(
            send,
            &json!({"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": "ud", "namespace": "ops"},
                    "data": {"user-data": "I2Nsb3VkLWNvbmZpZwo="}}),
        );
        let (req, send) = h.next_request().await.expect("the status patch");
        assert_eq!(req.method(), Method::PATCH);
        assert_eq!(req.uri().path(), format!("{PATH}/status"));
        assert_eq!(
            req.headers()["content-type"],
            "application/merge-patch+json"
        );
        let patch = body_json(req).await;
        let st = &patch["status"];
        assert_eq!(st["state"], "Running");
        assert_eq!(st["ip"], "192.0.2.1");
        assert_eq!(st["observedGeneration"], 3);
        assert_eq!(
            st.as_object().unwrap().get("provisioningSince"),
            Some(&Value::Null),
            "an absent field is written as null, so the merge removes an old value"
        );
        assert_eq!(st["applied"]["image"], "debian-13");
        assert_eq!(
            st["applied"]["userData"],
            json!({"name": "ud", "key": "user-data"})
        );
        let ready = st["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap();
        assert_eq!(
            (&ready["status"], &ready["reason"]),
            (&json!("True"), &json!("Running"))
        );
        assert!(
            !patch.to_string().contains("cloud-config"),
            "no user-data in the status"
        );
        let mut o = serde_json::to_value(object(&[FINALIZER], false)).unwrap();
        o["status"] = st.clone();
        respond(send, &o);
        assert!(h.next_request().await.is_none());
    })
    .await;
    assert_eq!(action, Action::requeue(Policy::default().poll_running));
}

#[tokio::test]
async fn deletion_deletes_the_vm_then_removes_the_finalizer() {
    let (ctx, mut h, lab) = setup();
    let uid = Identifier::new(UID).unwrap();
    let spec = CreateSpec::new(
        uid.clone(),
        "ops/egress-a",
        Identifier::new("debian-13").unwrap(),
    );
    lab.create(&spec).await.unwrap();
    let action = run(
        ctx,
        object(&["other.example/keep", FINALIZER], true),
        async move {
            let (patch, send) = json_patch(&mut h, "the finalizer removal").await;
            assert_eq!(
                patch,
                json!([
                    {"op": "test", "path": "/metadata/finalizers/1", "value": FINALIZER},
                    {"op": "remove", "path": "/metadata/finalizers/1"},
                ])
            );
            respond(
                send,
                &serde_json::to_value(object(&["other.example/keep"], true)).unwrap(),
            );
            assert!(h.next_request().await.is_none());
        },
    )
    .await;
    assert_eq!(action, Action::await_change());
    assert!(
        lab.get(&uid).await.unwrap_err().is_not_found(),
        "the VM is gone"
    );
}

#[tokio::test]
async fn a_failed_delete_keeps_the_finalizer() {
    let (ctx, mut h, _) = setup();
    // Entry `down` refuses connections: delete is Transient, so the finalizer must stay.
    let mut obj = object(&[FINALIZER], true);
    obj.spec.provider = "down".into();
    let server = tokio::spawn(async move {
        assert!(h.next_request().await.is_none(), "no finalizer patch");
    });
    let err = reconcile(Arc::new(obj), ctx.clone())
        .await
        .expect_err("a failed delete fails the reconcile");
    let msg = err.to_string();
    assert!(msg.contains("cannot reach the host"), "{msg}");
    drop(ctx); // closes the mock service: the server sees the end
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap();
}
