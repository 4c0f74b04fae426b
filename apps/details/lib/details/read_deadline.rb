# frozen_string_literal: true

module Details
  # Bounds how long a connection thread may block reading a request.
  #
  # WEBrick arms its TimeoutHandler around every line it reads; each arming
  # wakes the handler's watcher, which starts a fresh thread to wait on: a
  # few thread hand-offs per header line. Here arming is a hash store, and
  # one reaper thread checks the deadlines a few times a second: a timeout
  # fires up to `interval` late, which does not matter for limits counted in
  # seconds.
  class ReadDeadline
    def initialize(interval: 0.25, clock: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) })
      @interval = interval
      @clock = clock
      @mutex = Mutex.new
      @deadlines = {}
      @reaper = nil
    end

    # Runs the block; if it is still running `seconds` later, raises
    # `exception` in the calling thread.
    def within(seconds, exception)
      start_reaper
      thread = Thread.current
      @mutex.synchronize { @deadlines[thread] = [@clock.call + seconds, exception] }
      begin
        yield
      ensure
        @mutex.synchronize { @deadlines.delete(thread) }
      end
    end

    # Raises in every thread whose deadline has passed; the reaper calls it.
    def expire
      now = @clock.call
      @mutex.synchronize do
        @deadlines.delete_if do |thread, (at, exception)|
          next false if at > now

          thread.raise(exception, "read timeout")
          true
        end
      end
    end

    private

    def start_reaper
      return if @reaper

      @mutex.synchronize do
        @reaper ||= Thread.new do
          loop do
            sleep @interval
            expire
          end
        end
      end
    end
  end
end
