package io.modelgateway.core.limit;

import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.limit.shared.Resp;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The parts of the shared limiter's script calls that stay the same from call to call, encoded in RESP once: per
 * scope and limits its Redis key names and its limits, and the heads of the ids and hold keys of this replica. A
 * call then writes them with one copy each ({@link Resp#raw}) and encodes only what changes per request (the
 * sequence number, the token estimate). One instance per key prefix: a reload that changes the prefix makes a new
 * one; admissions keep the one they were made with, so they settle under the names they were admitted under.
 *
 * <p>Thread-safe: the cache is shared by every event loop, and what it holds is never changed.
 */
final class ScriptParts {
    /** Scopes encoded and kept, at most; past it (a config with more limited scopes than this) each is encoded anew. */
    static final int MAX_KEPT = 65_536;

    final String prefix;
    final String replicaId;
    /** {@code replicaId-}: an admission's id is this and its sequence number. */
    final byte[] idHead;
    /** {@code prefix h:replicaId-}: an admission's hold key is this and its sequence number. */
    final byte[] holdHead;
    private final ConcurrentHashMap<Key, Scoped> scopes = new ConcurrentHashMap<>();

    ScriptParts(String prefix, String replicaId) {
        this.prefix = prefix;
        this.replicaId = replicaId;
        this.idHead = (replicaId + "-").getBytes(StandardCharsets.UTF_8);
        this.holdHead = (prefix + "h:" + replicaId + "-").getBytes(StandardCharsets.UTF_8);
    }

    /** The encoded parts of {@code scope} under {@code limits}. */
    Scoped scope(Scope scope, LimitsConfig limits) {
        Key k = new Key(scope, limits);
        Scoped s = scopes.get(k);
        if (s == null) {
            s = new Scoped(prefix, scope, limits);
            if (scopes.size() < MAX_KEPT) {
                Scoped raced = scopes.putIfAbsent(k, s);
                if (raced != null) {
                    s = raced;
                }
            }
        }
        return s;
    }

    /** An admission's id: what settle.lua and renew.lua are given, and what its hold key ends with. */
    String id(long sequence) {
        return replicaId + "-" + sequence;
    }

    private record Key(Scope scope, LimitsConfig limits) {
    }

    /** One scope's parts, each a run of RESP bulk strings. */
    static final class Scoped {
        /** Its usage hash and its lease set: the keys every script of an admission takes for the scope. */
        final byte[] keys;
        /** The lease set alone (renew.lua). */
        final byte[] leaseKeyPart;
        /** admit.lua's limits: requests and tokens per minute, concurrent requests, daily tokens. */
        final byte[] admitLimits;
        /** settle.lua's first two: requests and tokens per minute. */
        final byte[] settleLimits;
        /** settle.lua's flags: whether the scope counts concurrency, whether it counts daily tokens. */
        final byte[] settleFlags;

        Scoped(String prefix, Scope scope, LimitsConfig l) {
            String name = SharedAdmission.keyName(scope);
            String leaseKey = prefix + "c:" + name;
            Resp r = new Resp();
            r.bulk(prefix + "u:" + name);
            r.bulk(leaseKey);
            this.keys = r.toByteArray();
            r.reset();
            r.bulk(leaseKey);
            this.leaseKeyPart = r.toByteArray();
            r.reset();
            r.bulk(l.requestsPerMinute());
            r.bulk(l.tokensPerMinute());
            r.bulk(l.concurrentRequests());
            r.bulk(l.dailyTokens());
            this.admitLimits = r.toByteArray();
            r.reset();
            r.bulk(l.requestsPerMinute());
            r.bulk(l.tokensPerMinute());
            this.settleLimits = r.toByteArray();
            r.reset();
            r.bulk(l.concurrentRequests() > 0 ? 1 : 0);
            r.bulk(l.dailyTokens() > 0 ? 1 : 0);
            this.settleFlags = r.toByteArray();
        }
    }
}
