# frozen_string_literal: true

require "socket"

module Details
  module Serving
    # In a drain, WEBrick's listener replaced by one that closes without resetting queued connections
    # (DESIGN.md, "Closing the listening socket without a reset").
    class PluggedListener
      PLUG_WAIT_SECONDS = 0.05
      PLUG_POLL_SECONDS = 0.001
      # SIOCOUTQ (tcp(7)), Linux's TIOCOUTQ: bytes sent and not yet acknowledged.
      SIOCOUTQ = 0x5411

      # serve: returns the thread serving a connection accepted while closing.
      def initialize(socket, serve:, until_time:, logger:)
        @socket = socket
        @serve = serve
        @until = until_time
        @logger = logger
        @serving = []
      end

      def to_io = @socket

      def addr = @socket.addr

      # On a listening socket shutdown resets the queue as close does.
      def shutdown(*) = 0

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

      # listen(0) leaves room for one connection: the plug's, once its byte is acknowledged.
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
