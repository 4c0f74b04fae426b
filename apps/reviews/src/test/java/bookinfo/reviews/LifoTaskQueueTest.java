package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.tomcat.util.threads.TaskThreadFactory;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;
import org.junit.jupiter.api.Test;

/** The worker queue: the latest idle worker gets the task, and no task is ever left waiting. */
class LifoTaskQueueTest {

    /** Starts a thread that takes one task from the queue into taken, and waits until it is parked. */
    private static Thread waiter(LifoTaskQueue queue, String name, Map<String, Runnable> taken) throws Exception {
        Thread t = new Thread(() -> {
            try {
                taken.put(name, queue.take());
            } catch (InterruptedException e) {
                taken.put(name, () -> { });
            }
        }, name);
        t.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (t.getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < deadline, name + " never parked");
            Thread.sleep(1);
        }
        return t;
    }

    @Test
    void theMostRecentlyIdleWorkerGetsTheTask() throws Exception {
        LifoTaskQueue queue = new LifoTaskQueue(Integer.MAX_VALUE);
        Map<String, Runnable> taken = new ConcurrentHashMap<>();
        Thread a = waiter(queue, "a", taken);
        Thread b = waiter(queue, "b", taken);
        Thread c = waiter(queue, "c", taken);
        Runnable first = () -> { };
        Runnable second = () -> { };
        assertTrue(queue.offer(first));
        c.join(5000);
        assertEquals(Map.of("c", first), taken);
        assertTrue(queue.offer(second));
        b.join(5000);
        assertEquals(Map.of("c", first, "b", second), taken);
        // An interrupted worker leaves the stack: the next task still reaches a waiting one.
        a.interrupt();
        a.join(5000);
        taken.clear();
        Thread d = waiter(queue, "d", taken);
        Runnable third = () -> { };
        assertTrue(queue.offer(third));
        d.join(5000);
        assertEquals(Map.of("d", third), taken);
    }

    @Test
    void timedPollGivesUpAtTheDeadline() throws Exception {
        LifoTaskQueue queue = new LifoTaskQueue(Integer.MAX_VALUE);
        long start = System.nanoTime();
        assertNull(queue.poll(50, TimeUnit.MILLISECONDS));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50));
    }

    @Test
    void tomcatsPoolRunsEveryTaskThroughBurstsAndIdleTimeouts() throws Exception {
        LifoTaskQueue queue = new LifoTaskQueue(Integer.MAX_VALUE);
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 8, 20, TimeUnit.MILLISECONDS, queue,
                new TaskThreadFactory("lifo-test-", true, Thread.NORM_PRIORITY));
        queue.setParent(pool);
        try {
            int producers = 4;
            int perProducer = 5000;
            CountDownLatch done = new CountDownLatch(producers * perProducer);
            AtomicInteger ran = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                Thread producer = new Thread(() -> {
                    for (int i = 0; i < perProducer; i++) {
                        pool.execute(() -> {
                            if (ThreadLocalRandom.current().nextInt(50) == 0) {
                                Thread.onSpinWait();
                            }
                            ran.incrementAndGet();
                            done.countDown();
                        });
                        if (i % 1000 == 999) {
                            try {
                                // Longer than the idle time: extra workers retire and come back.
                                Thread.sleep(30);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    }
                });
                threads.add(producer);
                producer.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(done.await(20, TimeUnit.SECONDS), "ran " + ran.get());
            assertEquals(producers * perProducer, ran.get());
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(5, TimeUnit.SECONDS));
        }
    }
}
