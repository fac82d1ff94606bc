# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""What contrib/ ships for a fleet beyond the node: the recording rules and
alerts of contrib/prometheus/rules.yml, checked and unit-tested by the real
promtool (contrib/prometheus/rules_test.yml), and the Kubernetes manifests
of contrib/kubernetes/, parsed as YAML with the fields that make them work
(test_fleet.py runs the rules in a live Prometheus)."""
import json
import os
import subprocess
import tempfile

from pctest import TOP, case, check, perfex, require_root, run_cases, skip
from promhelp import tool

CONTRIB = os.path.join(TOP, "contrib")
K8S = os.path.join(CONTRIB, "kubernetes")


def promtool(*args):
    r = subprocess.run([tool("promtool")] + list(args), capture_output=True,
                       text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


@case
def rules_pass_promtool_check():
    rc, out = promtool("check", "rules",
                       os.path.join(CONTRIB, "prometheus", "rules.yml"))
    check(rc == 0 and "SUCCESS" in out, out)


@case
def rules_pass_their_unit_tests():
    rc, out = promtool("test", "rules",
                       os.path.join(CONTRIB, "prometheus", "rules_test.yml"))
    check(rc == 0 and "SUCCESS" in out, out)


@case
def rules_unit_tests_fail_on_a_wrong_rule():
    """The unit tests catch a broken rule: rules.yml with the exporter-down
    alert's for: shortened, and the IPC's cycles turned into instructions,
    fails them."""
    with open(os.path.join(CONTRIB, "prometheus", "rules.yml")) as f:
        rules = f.read()
    with open(os.path.join(CONTRIB, "prometheus", "rules_test.yml")) as f:
        tests = f.read()
    for old, new in (("expr: up{job=\"perfex\"} == 0\n        for: 5m",
                      "expr: up{job=\"perfex\"} == 0\n        for: 1m"),
                     ('event="cycles",cgroup!=""', 'event="instructions",'
                      'cgroup!=""')):
        check(old in rules, old)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "rules.yml"), "w") as f:
                f.write(rules.replace(old, new))
            with open(os.path.join(d, "rules_test.yml"), "w") as f:
                f.write(tests)
            rc, out = promtool("test", "rules",
                               os.path.join(d, "rules_test.yml"))
            check(rc != 0 and "FAILED" in out, (new, out))


# ------------------------------------------------------------- Kubernetes


def load_all(name):
    """The documents of contrib/kubernetes/NAME, through PyYAML: this
    interpreter's, or Debian's python3-yaml under /usr/bin/python3."""
    path = os.path.join(K8S, name)
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml:
        with open(path) as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    if not os.path.exists("/usr/bin/python3"):
        skip("no YAML parser (apt-get install python3-yaml)")
    r = subprocess.run(
        ["/usr/bin/python3", "-c", "import json, sys, yaml; json.dump("
         "[d for d in yaml.safe_load_all(open(sys.argv[1])) if d], "
         "sys.stdout)", path], capture_output=True, text=True, timeout=60)
    if "No module named" in r.stderr:
        skip("no YAML parser (apt-get install python3-yaml)")
    check(r.returncode == 0, r.stderr)
    return json.loads(r.stdout)


def kinds(docs):
    return {d["kind"]: d for d in docs}


@case
def kubernetes_daemonset_has_what_perfex_serve_needs():
    docs = kinds(load_all("perfex-serve.yaml"))
    check(set(docs) == {"ConfigMap", "DaemonSet"}, list(docs))
    ds = docs["DaemonSet"]
    check(ds["apiVersion"] == "apps/v1", ds["apiVersion"])
    sel = ds["spec"]["selector"]["matchLabels"]
    pod = ds["spec"]["template"]
    check(all(pod["metadata"]["labels"].get(k) == v for k, v in sel.items()),
          (sel, pod["metadata"]))
    spec = pod["spec"]
    check(spec.get("hostPID") is True, spec)
    check(not spec.get("hostNetwork"), spec)
    (c,) = spec["containers"]
    sc = c["securityContext"]
    # No more than the two capabilities docs/fleet.md justifies.
    check(sc["capabilities"] == {"drop": ["ALL"], "add": ["PERFMON", "BPF"]},
          sc)
    check(sc.get("privileged") is False and
          sc.get("allowPrivilegeEscalation") is False and
          sc.get("runAsUser") == 0 and sc.get("readOnlyRootFilesystem"), sc)
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in spec["volumes"]}
    check(set(mounts) == set(vols), (mounts, vols))
    for name, host, at in (("cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup"),
                           ("tracefs", "/sys/kernel/tracing",
                            "/sys/kernel/tracing")):
        check(vols[name]["hostPath"]["path"] == host, vols[name])
        check(mounts[name]["mountPath"] == at and mounts[name]["readOnly"],
              mounts[name])
    # The configuration comes from the ConfigMap and listens on the
    # port the pod declares.
    cm = docs["ConfigMap"]
    check(vols["config"]["configMap"]["name"] == cm["metadata"]["name"], vols)
    conf_dir = mounts["config"]["mountPath"]
    check(c["args"][:3] == ["serve", "--config", conf_dir + "/serve.conf"],
          c["args"])
    conf = cm["data"]["serve.conf"]
    check("listen 0.0.0.0:9717\n" in conf, conf)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check(ports == {"metrics": 9717}, ports)
    check(c["readinessProbe"]["httpGet"]["port"] == "metrics", c)
    check(cm["metadata"]["namespace"] == ds["metadata"]["namespace"], cm)


@case
def kubernetes_daemonset_configuration_parses():
    """The ConfigMap's serve.conf is a configuration perfex serve takes
    (--once: counted once and printed)."""
    require_root()
    conf = kinds(load_all("perfex-serve.yaml"))["ConfigMap"]["data"][
        "serve.conf"]
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write(conf)
        f.flush()
        r = perfex("serve", "--once", "--config", f.name)
    check(r.returncode == 0, r.stderr)
    check("perfex_events_total{" in r.stdout, r.stdout[:2000])


@case
def kubernetes_service_and_servicemonitor_select_the_daemonset():
    ds = kinds(load_all("perfex-serve.yaml"))["DaemonSet"]
    pod_labels = ds["spec"]["template"]["metadata"]["labels"]
    ns = ds["metadata"]["namespace"]
    (svc,) = load_all("service.yaml")
    check(svc["apiVersion"] == "v1" and svc["kind"] == "Service", svc)
    check(svc["metadata"]["namespace"] == ns, svc)
    check(all(pod_labels.get(k) == v
              for k, v in svc["spec"]["selector"].items()), svc)
    (port,) = svc["spec"]["ports"]
    check(port["name"] == "metrics" and port["targetPort"] == "metrics" and
          port["port"] == 9717, port)
    (sm,) = load_all("servicemonitor.yaml")
    check(sm["apiVersion"] == "monitoring.coreos.com/v1" and
          sm["kind"] == "ServiceMonitor", sm)
    check(sm["spec"]["namespaceSelector"]["matchNames"] == [ns], sm)
    check(all(svc["metadata"]["labels"].get(k) == v
              for k, v in sm["spec"]["selector"]["matchLabels"].items()), sm)
    (ep,) = sm["spec"]["endpoints"]
    check(ep["port"] == "metrics" and ep["path"] == "/metrics", ep)
    # Job "perfex", as rules.yml's alerts select it, and the node label.
    relabel = {r["targetLabel"]: r for r in ep["relabelings"]}
    check(relabel["job"]["replacement"] == "perfex", relabel)
    check(relabel["node"]["sourceLabels"] ==
          ["__meta_kubernetes_pod_node_name"], relabel)


@case
def kubernetes_scrape_config_keeps_the_daemonset_pods():
    (cfg,) = load_all("prometheus.yml")
    (job,) = cfg["scrape_configs"]
    check(job["job_name"] == "perfex", job)
    ds = kinds(load_all("perfex-serve.yaml"))["DaemonSet"]
    (sd,) = job["kubernetes_sd_configs"]
    check(sd["role"] == "pod" and
          sd["namespaces"]["names"] == [ds["metadata"]["namespace"]], sd)
    keep = [r for r in job["relabel_configs"] if r.get("action") == "keep"]
    check([(r["source_labels"], r["regex"]) for r in keep] ==
          [(["__meta_kubernetes_pod_label_app_kubernetes_io_name"],
            ds["spec"]["template"]["metadata"]["labels"][
                "app.kubernetes.io/name"]),
           (["__meta_kubernetes_pod_container_port_name"], "metrics")], keep)
    # promtool checks it too where its build has Kubernetes discovery
    # (Debian's has not).
    rc, out = promtool("check", "config", os.path.join(K8S, "prometheus.yml"))
    if "kubernetes_sd_configs not found" in out:
        return
    check(rc == 0, out)


if __name__ == "__main__":
    run_cases()
