# frozen_string_literal: true

require "socket"

module Details
  module Serving
    # A listening socket that closes without resetting a connection queued on
    # it (DESIGN.md, "Closing the listening socket without a reset"; the same
    # steps as productpage's serving/listener.py). Shutdown puts one in place
    # of each of WEBrick's listeners: WEBrick's accept loop selects on #to_io
    # and, once it has stopped, its cleanup calls #shutdown and #close here.
    class PluggedListener
      # Then a plug is tried again (its ack takes microseconds, or never comes).
      PLUG_WAIT_SECONDS = 0.05
      PLUG_POLL_SECONDS = 0.001
      # SIOCOUTQ (tcp(7)), Linux's TIOCOUTQ: bytes sent and not yet acknowledged.
      SIOCOUTQ = 0x5411

      # serve: called with each connection accepted while closing, returns
      # the thread serving it; until_time: a monotonic time to give up plugging.
      def initialize(socket, serve:, until_time:, logger:)
        @socket = socket
        @serve = serve
        @until = until_time
        @logger = logger
        @serving = []
      end

      def to_io = @socket

      def addr = @socket.addr

      # WEBrick shuts a listener down before closing it; on a listening
      # socket both reset what is queued, so the work is #close's alone.
      def shutdown(*) = 0

      # Serves what is queued, plugs the queue with a connection of our own,
      # closes (the plug is the one connection reset), and waits for the
      # connections it accepted to be answered.
      def close
        return if @socket.closed?

        plug = plug_queue
        port = @socket.local_address.ip_port
        @socket.close
        plug&.close
        if plug
          @logger.info("port #{port} closed, plugged; #{@serving.size} connections queued on it answered")
        else
          @logger.warn("port #{port} closed unplugged: connections queued on it may have been reset")
        end
        @serving.each(&:join)
      end

      def closed? = @socket.closed?

      private

      def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

      # listen(0): the queue has room for one connection (Linux counts it
      # full once it holds more than the backlog); a handshake that finds it
      # full is dropped and its client retries the SYN a second later, to be
      # refused. The plug's byte is acknowledged only once its own connection
      # is queued: nothing else is then, and nobody accepts any more.
      def plug_queue
        @socket.listen(0)
        while now < @until
          accept_queued
          plug = try_plug
          return plug if plug
        end
        accept_queued
        nil
      end

      def accept_queued
        loop do
          sock = @socket.accept_nonblock(exception: false)
          return if sock == :wait_readable

          @serving << @serve.call(sock)
        rescue Errno::ECONNABORTED, Errno::ECONNRESET, Errno::EPROTO
          next # gone before the accept: nothing to answer
        end
      end

      def try_plug
        plug = Socket.tcp(*own_address, connect_timeout: PLUG_WAIT_SECONDS)
        plug.write("\0")
        give_up = now + PLUG_WAIT_SECONDS
        until unacknowledged(plug).zero?
          raise Errno::ETIMEDOUT, "plug not acknowledged" if now > give_up

          sleep PLUG_POLL_SECONDS
        end
        plug
      rescue SystemCallError, IOError
        plug&.close
        nil
      end

      def own_address
        local = @socket.local_address
        host = local.ip_address
        host = local.ipv4? ? "127.0.0.1" : "::1" if ["0.0.0.0", "::"].include?(host)
        [host, local.ip_port]
      end

      def unacknowledged(sock)
        buf = [0].pack("i")
        sock.ioctl(SIOCOUTQ, buf)
        buf.unpack1("i")
      end
    end
  end
end
