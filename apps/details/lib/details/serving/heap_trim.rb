# frozen_string_literal: true

require "fiddle"

module Details
  module Serving
    # Gives memory back once a flood of connections (a thread each) has gone (DESIGN.md, "Memory after floods"): a
    # full GC and glibc's malloc_trim(0) once the thread count has stayed FALL below its high for QUIET seconds.
    class HeapTrim
      FALL = 64
      QUIET = 5

      def self.start
        trim = Fiddle::Function.new(Fiddle::Handle::DEFAULT["malloc_trim"], [Fiddle::TYPE_SIZE_T], Fiddle::TYPE_INT)
        Thread.new { watch(trim) }
      rescue Fiddle::DLError
        nil
      end

      def self.watch(trim)
        high = Thread.list.size
        quiet = 0
        loop do
          sleep 1
          now = Thread.list.size
          high = [high, now].max
          quiet = high - now >= FALL ? quiet + 1 : 0
          next if quiet < QUIET

          GC.start
          trim.call(0)
          high = now
        end
      end
    end
  end
end
