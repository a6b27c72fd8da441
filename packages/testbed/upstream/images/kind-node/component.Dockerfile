# A control-plane image for the kind node (kube-apiserver, kube-controller-manager, kube-scheduler, etcd):
# the binary packages/testbed/upstream built, in /usr/local/bin where kubeadm's static pod manifests call it
# by name, on the distroless static-like base. As root: kubeadm's manifests set no user, and the binaries read
# root-only keys in /etc/kubernetes/pki (etcd writes /var/lib/etcd).
ARG STATIC_IMAGE=gcr.io/distroless/static-debian12
FROM ${STATIC_IMAGE}
COPY bin/ /usr/local/bin/
USER 0:0
