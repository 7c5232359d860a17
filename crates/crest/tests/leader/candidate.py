"""A leader election candidate through the Kubernetes Python client's own leader election
(kubernetes.leaderelection with its Lease lock), as an operator would run it.

Usage: candidate.py KUBECONFIG IDENTITY LEASE_NAME
Prints "LEADING <identity>" when it becomes the leader (and keeps leading until killed),
"STOPPED <identity>" if it loses the lease.
"""
import logging
import sys
import threading

from kubernetes import config
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock


def main():
    kubeconfig, identity, name = sys.argv[1:4]
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    config.load_kube_config(config_file=kubeconfig)
    forever = threading.Event()

    def started():
        print(f"LEADING {identity}", flush=True)
        forever.wait()

    def stopped():
        print(f"STOPPED {identity}", flush=True)

    lock = LeaseLock(name, "default", identity)
    cfg = electionconfig.Config(
        lock,
        lease_duration=4,
        renew_deadline=3,
        retry_period=1,
        onstarted_leading=started,
        onstopped_leading=stopped,
    )
    leaderelection.LeaderElection(cfg).run()


if __name__ == "__main__":
    main()
