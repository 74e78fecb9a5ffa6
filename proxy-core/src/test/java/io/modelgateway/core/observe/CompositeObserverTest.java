package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.ExchangeObserver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompositeObserverTest {
    /** Notes every call as "name:started" / "name:ended". */
    private record Recording(String name, List<String> calls) implements ExchangeObserver {
        @Override
        public void started(ExchangeRecord record) {
            calls.add(name + ":started");
        }

        @Override
        public void ended(ExchangeRecord record) {
            calls.add(name + ":ended");
        }
    }

    @Test
    void of_fansOutInOrder() {
        List<String> calls = new ArrayList<>();
        ExchangeObserver all = CompositeObserver.of(new Recording("a", calls), new Recording("b", calls));
        ExchangeRecord r = Records.stream("k", "m");

        all.started(r);
        all.ended(r);

        assertThat(calls).containsExactly("a:started", "b:started", "a:ended", "b:ended");
    }

    @Test
    void of_skipsNoopAndNullAndUnwrapsSingles() {
        ExchangeObserver only = new Recording("a", new ArrayList<>());
        assertThat(CompositeObserver.of()).isSameAs(ExchangeObserver.NOOP);
        assertThat(CompositeObserver.of(ExchangeObserver.NOOP, null)).isSameAs(ExchangeObserver.NOOP);
        assertThat(CompositeObserver.of(ExchangeObserver.NOOP, only)).isSameAs(only);
    }

    @Test
    void failingObserver_doesNotStopTheOthers() {
        List<String> calls = new ArrayList<>();
        ExchangeObserver failing = new ExchangeObserver() {
            @Override
            public void started(ExchangeRecord record) {
                throw new IllegalStateException("boom");
            }

            @Override
            public void ended(ExchangeRecord record) {
                throw new IllegalStateException("boom");
            }
        };
        ExchangeObserver all = CompositeObserver.of(failing, new Recording("b", calls));

        all.started(Records.stream("k", "m"));
        all.ended(Records.stream("k", "m"));

        assertThat(calls).containsExactly("b:started", "b:ended");
    }
}
