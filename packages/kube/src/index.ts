// Logs

// Events
export { type Correlation, type CorrelatorOptions, EventCorrelator } from "./events/correlator.js";
export { EventRecorder, type EventRecorderOptions, type EventType, referenceTo } from "./events/recorder.js";
// Informers
export { deepFreeze } from "./informer/deep-freeze.js";
export { InformerFactory, type InformerFactoryOptions, type InformerRequest } from "./informer/factory.js";
export {
  byNamespace,
  byNodeName,
  byServiceName,
  type Indexers,
  type IndexFunc,
  indexNames,
  serviceNameLabel,
} from "./informer/indexers.js";
export { type EventHandler, Informer, type InformerOptions } from "./informer/informer.js";
export {
  Reflector,
  type ReflectorOptions,
  type ReflectorSink,
  WatchStalledError,
} from "./informer/reflector.js";
export { type Lister, type ReplaceResult, Store } from "./informer/store.js";
// Leader election
export {
  type LeaderCallbacks,
  LeaderElector,
  type LeaderElectorOptions,
} from "./leaderelection/leader-elector.js";
export { type LeaderElectionRecord, LeaseLock, type ObservedLease } from "./leaderelection/lease-lock.js";
export { formatMicroTime, parseMicroTime } from "./leaderelection/micro-time.js";
export {
  discardLogger,
  jsonLine,
  type LogEntry,
  type LogFields,
  Logger,
  type LoggerOptions,
  type LogLevel,
  type LogSink,
  levelFromVerbosity,
  type StructuredLogger,
} from "./log/logger.js";
// REST
export {
  ApiError,
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  isResourceExpired,
  type Status,
} from "./rest/api-error.js";
export {
  type DeleteOptions,
  type ListOptions,
  listAll,
  type PatchOptions,
  type PatchType,
  patchContentTypes,
  type RestClient,
  type WatchOptions,
  type WriteOptions,
} from "./rest/client.js";
export { type ClientCertificate, clientCertificateAccess } from "./rest/client-certificate.js";
export type { ClusterAccess, CurrentCluster } from "./rest/cluster-access.js";
export { dropNullFields, parseApiJson } from "./rest/decode.js";
export {
  HttpRestClient,
  type HttpRestClientOptions,
  type PathWatchOptions,
  type RequestOutcome,
} from "./rest/http-client.js";
export { type InClusterOptions, inClusterAccess } from "./rest/in-cluster.js";
export { kubeconfigAccess, type LoadKubeConfigOptions, loadKubeConfig } from "./rest/kubeconfig.js";
export { clusterAccess, masterFlagError, masterURL } from "./rest/master.js";
export {
  type KubeList,
  type KubeObject,
  keyOf,
  objectKey,
  type WatchEvent,
  type WatchEventType,
} from "./rest/object.js";
export { queryString, resourcePath } from "./rest/paths.js";
export {
  apiVersionOf,
  configMaps,
  defineResource,
  endpointSlices,
  endpoints,
  events,
  leases,
  namespaces,
  nodes,
  pods,
  type ResourceDescriptor,
  services,
} from "./rest/resources.js";
// Server
export { type CheckResult, type HealthCheck, HealthChecks } from "./server/health-checks.js";
export { isUnspecifiedAddress, listenHost } from "./server/listen-host.js";
export { ComponentServer, type ComponentServerOptions } from "./server/server.js";
export { Backoff, type BackoffOptions } from "./util/backoff.js";
// Time
export { backgroundClock, type Clock, realClock, sleep, type TimerHandle } from "./util/clock.js";
export { abortable, Deadline, TimeoutError } from "./util/deadline.js";
export { formatTime } from "./util/meta-time.js";
export { TokenBucket } from "./util/token-bucket.js";
// Work queue
export { createQueueMetrics, noopQueueMetrics, type QueueMetrics } from "./workqueue/metrics.js";
export { type GetResult, type QueueOptions, WorkQueue } from "./workqueue/queue.js";
export {
  BucketRateLimiter,
  type ControllerRateLimiterOptions,
  defaultControllerRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from "./workqueue/rate-limiters.js";
export { RateLimitingQueue, type RateLimitingQueueOptions } from "./workqueue/rate-limiting-queue.js";
export { type RetryOutcome, type RunWorkersOptions, retryOrForget, runWorkers } from "./workqueue/workers.js";
